"""ConfigurationForm: the setup fields (keys of ``spark_destination.core.config``) and named tests.

The form is data: one ``Field`` per configuration key in ``FIELDS`` (adding a key to the form is
adding one entry), rendered into the protobuf by ``configuration_form``. Choices are dropdowns,
yes/no settings toggles, secrets password fields, everything else plain text.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final, assert_never

from spark_destination.core import config
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common


class Kind(enum.Enum):
    TEXT = enum.auto()
    SECRET = enum.auto()  # a password field: Fivetran masks it
    DROPDOWN = enum.auto()
    TOGGLE = enum.auto()  # "true" / "false"


@dataclass(frozen=True, slots=True, kw_only=True)
class Field:
    name: str
    label: str
    description: str
    kind: Kind = Kind.TEXT
    default: str | None = None
    placeholder: str | None = None
    choices: tuple[str, ...] = ()
    required: bool = False


@dataclass(frozen=True, slots=True)
class Test:
    name: str
    label: str


FIELDS: Final[tuple[Field, ...]] = (
    Field(
        name="warehouse",
        label="Iceberg warehouse location",
        description="Path or URI of the Iceberg warehouse (Hadoop catalog) that holds the "
        "tables. Every Spark executor must be able to reach it.",
        default=config.DEFAULT_WAREHOUSE,
        placeholder="/data/warehouse or s3a://bucket/warehouse",
    ),
    Field(
        name="catalog",
        label="Catalog name",
        description="Name of the Iceberg catalog in Spark SQL (letters, digits, underscores).",
        default=config.DEFAULT_CATALOG,
        placeholder=config.DEFAULT_CATALOG,
    ),
    Field(
        name="spark_master",
        label="Spark master URL",
        description="Where Spark runs: local[*] runs it inside the destination. Fixed when the "
        "destination starts Spark.",
        default=config.DEFAULT_MASTER,
        placeholder="local[*] or spark://host:7077",
    ),
    Field(
        name="driver_memory",
        label="Spark driver memory",
        description="Memory of the Spark driver, e.g. 2g or 512m. Fixed when the destination "
        "starts Spark.",
        default=config.DEFAULT_DRIVER_MEMORY,
        placeholder=config.DEFAULT_DRIVER_MEMORY,
    ),
    Field(
        name="jar_source",
        label="Iceberg runtime jar",
        description="bundled: the Iceberg runtime shipped with the destination (works offline). "
        "maven: resolved from Maven when Spark starts.",
        kind=Kind.DROPDOWN,
        default=config.JAR_SOURCES[0],
        choices=config.JAR_SOURCES,
    ),
    Field(
        name="spark_conf",
        label="Extra Spark settings",
        description="spark.* settings as key=value pairs separated by ';' or new lines, e.g. "
        "spark.executor.memory=4g. Fixed when the destination starts Spark.",
        placeholder="spark.executor.memory=4g; spark.executor.cores=2",
    ),
    Field(
        name="batch_file_format",
        label="Batch file format",
        description="The format Fivetran writes batch files in: CSV or Parquet (announced in "
        "Capabilities from the destination's start-up default).",
        kind=Kind.DROPDOWN,
        default=config.DEFAULT_BATCH_FILE_FORMAT,
        choices=config.BATCH_FILE_FORMATS,
    ),
    Field(
        name="executor_memory",
        label="Executor memory",
        description="spark.executor.memory on a cluster, e.g. 4g. Fixed when the destination "
        "starts Spark.",
        placeholder="4g",
    ),
    Field(
        name="executor_cores",
        label="Executor cores",
        description="spark.executor.cores on a cluster. Fixed when the destination starts Spark.",
        placeholder="2",
    ),
    Field(
        name="catalog_type",
        label="Catalog type",
        description="hadoop: metadata in the warehouse folder; rest: an Iceberg REST catalog "
        "(Polaris, Unity Catalog, Nessie, Glue; needs Iceberg jar source maven); hive: a Hive "
        "metastore.",
        kind=Kind.DROPDOWN,
        default=config.CATALOG_TYPES[0],
        choices=config.CATALOG_TYPES,
    ),
    Field(
        name="catalog_uri",
        label="Catalog URI",
        description="REST: the service's base URL; Hive: the metastore URI.",
        placeholder="https://catalog.example.com/api or thrift://metastore:9083",
    ),
    Field(
        name="catalog_credential",
        label="Catalog credential",
        description="REST: OAuth2 client credential 'client_id:client_secret'.",
        kind=Kind.SECRET,
    ),
    Field(
        name="extra_packages",
        label="Extra packages",
        description="Maven coordinates added to spark.jars.packages, comma-separated "
        "(object-store file systems, the Iceberg AWS bundle…). Fixed when the destination "
        "starts Spark.",
        placeholder="org.apache.hadoop:hadoop-aws:3.3.4",
    ),
    Field(
        name="maintenance_every_commits",
        label="Maintain every N commits",
        description="Compact files and expire snapshots of a table after this many committed "
        "requests to it, between requests (0: off).",
        default="0",
    ),
    Field(
        name="maintenance_delete_files",
        label="Maintain past N delete files",
        description="Maintain a table once it has this many live delete files (0: off).",
        default="0",
    ),
    Field(
        name="snapshot_retention_hours",
        label="Snapshot retention (hours)",
        description="Maintenance expires snapshots older than this.",
        default=str(config.DEFAULT_SNAPSHOT_RETENTION_HOURS),
    ),
)

# Named for what they check; the servicer runs them by name.
TEST_SETTINGS: Final = "settings_are_valid"
TEST_WAREHOUSE: Final = "spark_reaches_warehouse"
TESTS: Final = (
    Test(TEST_SETTINGS, "Checking the settings are valid"),
    Test(TEST_WAREHOUSE, "Starting Spark and reading the Iceberg warehouse"),
)


def _add(form: common.ConfigurationFormResponse, spec: Field) -> None:
    field = form.fields.add(
        name=spec.name, label=spec.label, description=spec.description, required=spec.required
    )
    if spec.default is not None:
        field.default_value = spec.default
    if spec.placeholder is not None:
        field.placeholder = spec.placeholder
    match spec.kind:
        case Kind.TEXT:
            field.text_field = common.PlainText
        case Kind.SECRET:
            field.text_field = common.Password
        case Kind.DROPDOWN:
            field.dropdown_field.dropdown_field.extend(spec.choices)
        case Kind.TOGGLE:
            field.toggle_field.SetInParent()
        case _:
            assert_never(spec.kind)


def configuration_form() -> common.ConfigurationFormResponse:
    form = common.ConfigurationFormResponse(
        schema_selection_supported=True, table_selection_supported=True
    )
    for spec in FIELDS:
        _add(form, spec)
    for test in TESTS:
        form.tests.add(name=test.name, label=test.label)
    return form
