"""Schema and table names stay one folder inside the warehouse; reserved names stay ours; the
operator's warehouse allow-list holds against ``..`` and symbolic links (pure)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spark_destination.cli.main import main as cli_main
from spark_destination.core.config import CatalogType
from spark_destination.core.errors import InvalidRequestError
from spark_destination.core.model import Column, DataType, Table
from spark_destination.core.names import path_problem
from spark_destination.core.warehouses import warehouse_allowed
from spark_destination.dialects.spark_iceberg import SPARK_ICEBERG
from spark_destination.planner.deferred import pending_ref
from spark_destination.planner.ir import TableRef
from spark_destination.planner.tables import table_ref, validate_columns

ESCAPING = [".", "..", "a/b", "../x", "/abs", "x/..", "s3a:x", "a\x00b", "line\nbreak", "é" * 128]


@pytest.mark.parametrize("name", ESCAPING)
def test_no_table_reference_can_name_another_place(name: str) -> None:
    assert path_problem(name) is not None
    with pytest.raises(InvalidRequestError, match="schema name"):
        TableRef(catalog="lake", schema=name, name="t")
    with pytest.raises(InvalidRequestError, match="table name"):
        TableRef(catalog="lake", schema="s", name=name)


@pytest.mark.parametrize("name", ["a.b", "...", ".hidden", " lead", "trail ", "数据", "a`b", "\\"])
def test_odd_but_plain_names_are_kept(name: str) -> None:
    assert path_problem(name) is None
    assert TableRef(catalog="lake", schema=name, name=name).name == name


def test_reserved_names_are_refused_for_tables_and_columns() -> None:
    # Today's own names and the earlier ones alike.
    for own in ("sd__pending__orders", "sd__changes", "__sd_pending_orders"):
        with pytest.raises(InvalidRequestError, match="reserves"):
            table_ref("lake", "s", own, target=SPARK_ICEBERG)
    # A column may be called sd__x: the destination's own columns start with __sd_.
    assert table_ref("lake", "s", "sd_x", target=SPARK_ICEBERG).name == "sd_x"
    table = Table(
        name="t",
        columns=(
            Column(name="id", type=DataType.INT, primary_key=True),
            Column(name="__sd_op", type=DataType.STRING),
        ),
    )
    with pytest.raises(InvalidRequestError, match="reserves"):
        validate_columns(table)


def test_maintain_refuses_a_name_outside_the_warehouse(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["maintain", "..", "orders", "--preview"]) == 2
    assert "schema name '..'" in capsys.readouterr().err


def test_allow_list_empty_allows_any() -> None:
    assert warehouse_allowed("/anywhere", ())


def test_allow_list_takes_roots_and_what_is_inside(tmp_path: Path) -> None:
    root = tmp_path / "lakes"
    (root / "a").mkdir(parents=True)
    allowed = (str(root),)
    assert warehouse_allowed(str(root), allowed)
    assert warehouse_allowed(str(root / "a"), allowed)
    assert warehouse_allowed(f"file://{root}/b", allowed)
    assert not warehouse_allowed(str(root / ".." / "other"), allowed)
    assert not warehouse_allowed(str(tmp_path / "lakes2"), allowed)
    assert not warehouse_allowed(str(tmp_path), allowed)


def test_a_symbolic_link_inside_an_allowed_root_does_not_lead_out(tmp_path: Path) -> None:
    root, outside = tmp_path / "lakes", tmp_path / "etc"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside)
    assert not warehouse_allowed(str(root / "link" / "w"), (str(root),))


def test_allow_list_of_uris_compares_scheme_host_and_whole_segments() -> None:
    allowed = ("s3a://Bucket/lake",)
    assert warehouse_allowed("s3a://bucket/lake/sales", allowed)
    assert not warehouse_allowed("s3a://bucket/lake2", allowed)
    assert not warehouse_allowed("s3a://bucket/lake/../other", allowed)
    assert not warehouse_allowed("s3a://other/lake", allowed)
    assert not warehouse_allowed("gs://bucket/lake", allowed)
    assert not warehouse_allowed("/bucket/lake", allowed)


def test_an_s3_root_names_its_bucket_and_prefix_under_every_s3_scheme() -> None:
    allowed = ("s3://lake/team-a",)
    for scheme in ("s3", "s3a", "s3n"):
        assert warehouse_allowed(f"{scheme}://lake/team-a/sales", allowed)
        assert not warehouse_allowed(f"{scheme}://lake/team-ab", allowed)
        assert not warehouse_allowed(f"{scheme}://other/team-a", allowed)
    assert not warehouse_allowed("gs://lake/team-a", allowed)


def test_a_request_outside_the_allow_list_is_refused_before_spark(tmp_path: Path) -> None:
    from spark_destination.core.errors import ConfigurationError
    from spark_destination.engine.engine import Engine, SessionProvider

    allowed = tmp_path / "lakes"
    engine = Engine(SessionProvider.embedded(), allowed_warehouses=(str(allowed),))
    assert engine.config({"warehouse": str(allowed / "a")}).warehouse == str(allowed / "a")
    with pytest.raises(ConfigurationError, match="not one this server allows"):
        engine.config({"warehouse": str(tmp_path / "elsewhere")})
    assert not engine.sessions.started


HIVE_ICEBERG = SPARK_ICEBERG.for_catalog(CatalogType.HIVE)


@pytest.mark.parametrize(
    ("schema", "table", "refused"),
    [
        ("my-schema", "t", "schema name 'my-schema' holds '-'; a Hive metastore takes only ASCII"),
        ("s", "order items", "table name 'order items' holds ' '; a Hive metastore takes only"),
        ("s", "数据", "table name '数据' holds '据', '数'"),
        ("Sales", "t", "schema name 'Sales' has upper-case letters; a Hive metastore stores"),
        ("s", "Orders", "would become 'orders'"),
        ("s", "t" * 129, "is 129 characters long; a Hive metastore takes at most 128"),
    ],
)
def test_a_hive_metastore_refuses_schema_and_table_names_it_cannot_keep(
    schema: str, table: str, refused: str
) -> None:
    """Refused before anything runs, naming the name and the metastore's rule; the Hadoop
    catalog takes every one of them."""
    with pytest.raises(InvalidRequestError, match=re.escape(refused)):
        table_ref("hms", schema, table, target=HIVE_ICEBERG)
    assert table_ref("lake", schema, table, target=SPARK_ICEBERG.for_catalog(CatalogType.HADOOP))


def test_a_hive_metastores_rules_leave_the_spark_catalog_name_and_columns_alone() -> None:
    assert table_ref("My-Lake", "s_1", "t" * 128, target=HIVE_ICEBERG).catalog == "My-Lake"
    odd = Table(name="t", columns=(Column(name="Odd Col.ü", type=DataType.INT),))
    validate_columns(odd)  # column names are Iceberg's own, whatever the catalog


def test_on_a_hive_metastore_a_too_long_intermediate_table_name_says_what_to_change() -> None:
    ref = table_ref("hms", "s", "t" * 120, target=HIVE_ICEBERG)
    with pytest.raises(InvalidRequestError, match="choose a shorter or other intermediate_table"):
        pending_ref(ref, "sd__pending__", target=HIVE_ICEBERG)
    assert pending_ref(ref, "p_", target=HIVE_ICEBERG).name == "p_" + "t" * 120
