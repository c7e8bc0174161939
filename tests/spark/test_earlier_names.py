"""The destination's own tables made under their earlier names (``__sd_pending_<table>``,
``__sd_changes``) keep working after an upgrade to today's ``sd__`` defaults: pending batches
left in an earlier-named intermediate table are flushed into their table, and a schema's
earlier changes table keeps receiving its records. An upgrade is a new server process: here a
second engine on the same Spark session, with today's defaults, takes over the warehouse."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from spark_destination.core.config import parse_config
from spark_destination.engine.engine import Engine, SessionProvider
from spark_destination.server.app import create_server
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc as pb_grpc
from tests.support.destination import UNMOD, Destination, Lake, column

pytestmark = [pytest.mark.spark, pytest.mark.one_write_mode]

COLUMNS = [column("id", "INT", pk=True), column("v", "STRING"), column("n", "INT")]
HEADER = [c.name for c in COLUMNS]


def _ok(response: Any) -> None:
    assert response.WhichOneof("response") in ("success",), response


def _upgraded(spark: Any, engine: Engine, dest: Destination) -> tuple[Engine, Destination, Any]:
    """A new engine (today's defaults) behind a server of its own, and a driver of it."""
    import grpc

    defaults = dict(engine._defaults)  # the first server's flags: the same warehouse
    provider = SessionProvider.shared(spark, parse_config(defaults))
    upgraded = Engine(provider, defaults=defaults)
    server, port = create_server(upgraded, port=0)
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    driver = Destination(
        stub=pb_grpc.DestinationConnectorStub(channel),
        workdir=dest.workdir,
        configuration={
            k: v
            for k, v in dest.configuration.items()
            if k != "intermediate_table_prefix" and k != "changes_table"
        },
        schema=dest.schema,
        # Batch files go on being numbered (a changes record names its file and row).
        counter=dest.counter,
    )
    return upgraded, driver, (server, channel)


def _tables(lake: Lake, schema: str) -> set[str]:
    return {r[1] for r in lake.child().sql(f"SHOW TABLES IN {lake.catalog}.`{schema}`").collect()}


def test_pending_rows_in_an_earlier_named_intermediate_table_are_flushed_after_the_upgrade(
    spark: Any, engine: Engine, dest: Destination, lake: Lake
) -> None:
    earlier = Destination(
        stub=dest.stub,
        workdir=dest.workdir,
        configuration={
            **dest.configuration,
            "write_mode": "deferred",
            "merge_interval_ms": "-1",
            "intermediate_table_prefix": "__sd_pending_",
        },
        schema=dest.schema,
    )
    _ok(earlier.create("t", COLUMNS))
    _ok(
        earlier.write(
            "t", COLUMNS, replace=[earlier.write_file(HEADER, [["1", "a", "1"], ["2", "b", "2"]])]
        )
    )
    _ok(earlier.write("t", COLUMNS, update=[earlier.write_file(HEADER, [["1", "A", UNMOD]])]))
    assert "__sd_pending_t" in _tables(lake, dest.schema)

    upgraded, driver, (server, channel) = _upgraded(spark, engine, earlier)
    try:
        # A request on the table flushes its pending rows first, from the earlier-named table.
        _ok(driver.write("t", COLUMNS, replace=[driver.write_file(HEADER, [["3", "c", "3"]])]))
        upgraded.flush(driver.configuration, dest.schema, "t")
        table = f"{lake.catalog}.`{dest.schema}`.t"
        rows = Counter(tuple(r) for r in lake.child().table(table).collect())
        assert rows == Counter({(1, "A", 1): 1, (2, "b", 2): 1, (3, "c", 3): 1})
        pending = f"{lake.catalog}.`{dest.schema}`.`__sd_pending_t`"
        assert lake.child().table(pending).count() == 0
        assert "sd__pending__t" not in _tables(lake, dest.schema)
    finally:
        channel.close()
        server.stop(None)
        upgraded.close()


def test_a_schemas_earlier_changes_table_keeps_its_records_after_the_upgrade(
    spark: Any, engine: Engine, dest: Destination, lake: Lake
) -> None:
    earlier = Destination(
        stub=dest.stub,
        workdir=dest.workdir,
        configuration={
            **dest.configuration,
            "write_mode": "merge",
            "bad_value_policy": "null",
            "changes_table": "__sd_changes",
        },
        schema=dest.schema,
    )
    _ok(earlier.create("t", COLUMNS))
    first = earlier.write("t", COLUMNS, replace=[earlier.write_file(HEADER, [["1", "a", "x"]])])
    assert first.WhichOneof("response") == "warning", first

    upgraded, driver, (server, channel) = _upgraded(spark, engine, earlier)
    try:
        second = driver.write("t", COLUMNS, replace=[driver.write_file(HEADER, [["2", "b", "y"]])])
        assert second.WhichOneof("response") == "warning", second
        assert "'__sd_changes'" in second.warning.message
        changes = f"{lake.catalog}.`{dest.schema}`.`__sd_changes`"
        keys = Counter(r["primary_key"] for r in lake.child().table(changes).collect())
        assert keys == Counter({'{"id":1}': 1, '{"id":2}': 1})
        assert "sd__changes" not in _tables(lake, dest.schema)
    finally:
        channel.close()
        server.stop(None)
        upgraded.close()
