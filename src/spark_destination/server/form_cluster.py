"""ConfigurationForm fields for clusters, catalogs and table maintenance (issue 11's keys of
``spark_destination.config``), kept apart from ``form`` so each part stays easy to review."""

from __future__ import annotations

from spark_destination import config
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common

_FIXED = " Fixed when the destination starts Spark."


def add_cluster_fields(form: common.ConfigurationFormResponse) -> None:
    def text(name: str, label: str, description: str, *, default: str = "",
             placeholder: str = "", secret: bool = False) -> None:  # fmt: skip
        form.fields.add(
            name=name,
            label=label,
            description=description,
            required=False,
            text_field=common.Password if secret else common.PlainText,
            default_value=default,
            placeholder=placeholder,
        )

    text("executor_memory", "Executor memory", "spark.executor.memory on a cluster." + _FIXED,
         placeholder="4g")  # fmt: skip
    text("executor_cores", "Executor cores", "spark.executor.cores on a cluster." + _FIXED,
         placeholder="2")  # fmt: skip
    catalog_type = form.fields.add(
        name="catalog_type",
        label="Catalog type",
        description="hadoop: metadata in the warehouse folder; rest: an Iceberg REST catalog "
        "(Polaris, Unity Catalog, Nessie, Glue; needs Iceberg jar source maven); hive: a Hive "
        "metastore.",
        required=False,
        default_value="hadoop",
    )
    catalog_type.dropdown_field.dropdown_field.extend(config.CATALOG_TYPES)
    text("catalog_uri", "Catalog URI", "REST: the service's base URL; Hive: the metastore URI.",
         placeholder="https://catalog.example.com/api or thrift://metastore:9083")  # fmt: skip
    text("catalog_credential", "Catalog credential",
         "REST: OAuth2 client credential 'client_id:client_secret'.", secret=True)  # fmt: skip
    text("extra_packages", "Extra packages",
         "Maven coordinates added to spark.jars.packages, comma-separated (object-store file "
         "systems, the Iceberg AWS bundle…)." + _FIXED,
         placeholder="org.apache.hadoop:hadoop-aws:3.3.4")  # fmt: skip
    text("maintenance_every_commits", "Maintain every N commits",
         "Compact files and expire snapshots of a table after this many committed requests "
         "to it, between requests (0: off).", default="0")  # fmt: skip
    text("maintenance_delete_files", "Maintain past N delete files",
         "Maintain a table once it has this many live delete files (0: off).",
         default="0")  # fmt: skip
    text("snapshot_retention_hours", "Snapshot retention (hours)",
         "Maintenance expires snapshots older than this.",
         default=str(config.DEFAULT_SNAPSHOT_RETENTION_HOURS))  # fmt: skip
