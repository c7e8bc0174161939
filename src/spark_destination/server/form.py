"""ConfigurationForm: the setup fields (keys of ``spark_destination.config``) and named tests."""

from __future__ import annotations

from spark_destination import config
from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2 as common

TEST_CONFIGURATION = "configuration"
TEST_WAREHOUSE = "warehouse"


def configuration_form() -> common.ConfigurationFormResponse:
    form = common.ConfigurationFormResponse(
        schema_selection_supported=True, table_selection_supported=True
    )
    form.fields.add(
        name="warehouse",
        label="Iceberg warehouse",
        description="Path or URI of the Iceberg warehouse (Hadoop catalog). Every Spark "
        "executor must be able to reach it.",
        required=False,
        text_field=common.PlainText,
        default_value=config.DEFAULT_WAREHOUSE,
        placeholder="/data/warehouse or s3a://bucket/warehouse",
    )
    form.fields.add(
        name="catalog",
        label="Catalog name",
        description="Name of the Iceberg catalog in Spark SQL.",
        required=False,
        text_field=common.PlainText,
        default_value=config.DEFAULT_CATALOG,
    )
    form.fields.add(
        name="spark_master",
        label="Spark master",
        description="Spark master URL; local[*] runs Spark inside the destination. Fixed when "
        "the destination starts Spark.",
        required=False,
        text_field=common.PlainText,
        default_value=config.DEFAULT_MASTER,
        placeholder="local[*] or spark://host:7077",
    )
    form.fields.add(
        name="driver_memory",
        label="Driver memory",
        description="Spark driver memory, e.g. 2g. Fixed when the destination starts Spark.",
        required=False,
        text_field=common.PlainText,
        default_value=config.DEFAULT_DRIVER_MEMORY,
    )
    jar_source = form.fields.add(
        name="jar_source",
        label="Iceberg jar source",
        description="bundled: the Iceberg runtime shipped with the package (works offline); "
        "maven: spark.jars.packages coordinates resolved from Maven.",
        required=False,
        default_value="bundled",
    )
    jar_source.dropdown_field.dropdown_field.extend(config.JAR_SOURCES)
    form.fields.add(
        name="spark_conf",
        label="Extra Spark settings",
        description="key=value pairs separated by ';' or new lines, e.g. "
        "spark.executor.memory=4g. Fixed when the destination starts Spark.",
        required=False,
        text_field=common.PlainText,
    )
    file_format = form.fields.add(
        name="batch_file_format",
        label="Batch file format",
        description="csv or parquet: the format Fivetran writes batch files in (announced in "
        "Capabilities from the destination's start-up default).",
        required=False,
        default_value=config.DEFAULT_BATCH_FILE_FORMAT,
    )
    file_format.dropdown_field.dropdown_field.extend(config.BATCH_FILE_FORMATS)
    form.tests.add(name=TEST_CONFIGURATION, label="Validating the configuration")
    form.tests.add(name=TEST_WAREHOUSE, label="Connecting to Spark and the Iceberg warehouse")
    return form
