"""The pure layers stay pure, identifiers are always quoted, and preview needs no JVM."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from spark_destination.dialects.quoting import ident, qualified

SRC = Path(__file__).resolve().parents[2] / "src" / "spark_destination"
PURE = ("planner", "dialects", "templates")


# What each layer may not import. The planner asks a ``Target`` and never names a dialect;
# the runtime runs rendered statements (``dialects.rendered``: data, no rendering code) and
# never renders.
# Above the runtime: the engine (requests), then what calls it (the gRPC server, the CLI, the
# replay tool and the local services the tests and the demo start).
CALLERS = (
    "spark_destination.server",
    "spark_destination.cli",
    "spark_destination.replay",
    "spark_destination.local_services",
)
# What the pure layers never import: Spark and gRPC themselves, and every layer above them
# (docs/architecture.md, "Layers and folders"): the runtime, the engine and its callers.
FORBIDDEN = (
    "pyspark",
    "py4j",
    "grpc",
    "spark_destination.runtime",
    "spark_destination.engine",
    *CALLERS,
)
LAYER_RULES = {
    "core": (*FORBIDDEN, "spark_destination.planner", "spark_destination.dialects"),
    **dict.fromkeys(PURE, FORBIDDEN),
    "planner": (*FORBIDDEN, "spark_destination.dialects"),
    "runtime": ("spark_destination.dialects", "spark_destination.engine", *CALLERS),
    "engine": CALLERS,
}
# The one module of a forbidden package a layer may import.
ALLOWED = {"runtime": ("spark_destination.dialects.rendered",)}


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


@pytest.mark.parametrize("layer", list(LAYER_RULES))
def test_layers_import_only_downward(layer: str) -> None:
    forbidden = LAYER_RULES[layer]
    offenders = [
        f"{path.name}: {name}"
        for path in (SRC / layer).rglob("*.py")
        for name in _imports(path)
        if name.startswith(forbidden) and not name.startswith(ALLOWED.get(layer, ()))
    ]
    assert offenders == [], f"{layer}/ imports what it may not: {offenders}"


@pytest.mark.parametrize(
    ("name", "quoted"),
    [
        ("plain", "`plain`"),
        ("with space", "`with space`"),
        ("dotted.name", "`dotted.name`"),
        ("hyphen-ated", "`hyphen-ated`"),
        ("back`tick", "`back``tick`"),
        ("select", "`select`"),
    ],
)
def test_every_identifier_is_quoted_and_backticks_doubled(name: str, quoted: str) -> None:
    assert ident(name) == quoted


def test_qualified_names_quote_each_part() -> None:
    assert qualified("lake", "my.schema", "t`1") == "`lake`.`my.schema`.`t``1`"


def test_preview_prints_the_sql_without_starting_spark(tmp_path: Path) -> None:
    request = {
        "request": "write_batch",
        "schema": "sales",
        "table": {
            "name": "orders",
            "columns": {"id": "INT", "note": "STRING"},
            "primary_key": ["id"],
        },
        "replace_files": ["/data/a.csv"],
        "file_params": {"null_string": "NUL", "unmodified_string": "UNM"},
    }
    path = tmp_path / "request.json"
    path.write_text(json.dumps(request), encoding="utf-8")
    code = (
        "import sys; from spark_destination.cli.main import main; "
        "rc = main(['preview', sys.argv[1]]);"
        "assert 'pyspark' not in sys.modules, 'preview imported pyspark'; sys.exit(rc)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "MERGE INTO `lake`.`sales`.`orders` AS `t`" in result.stdout
    # Every form of the MERGE the runtime may run is shown.
    assert result.stdout.count("MERGE INTO") == 4
    assert "or instead when no key repeats in the staged batch" in result.stdout
    assert "or instead when no key repeats, and few enough keys to bind" in result.stdout
    assert "or instead when repeated keys folded, and few enough keys to bind" in result.stdout
    assert ":sd_key_0_199" in result.stdout
    assert "stage view 'sd_batch' from [replace:/data/a.csv]" in result.stdout


def test_preview_of_create_table_and_truncate(tmp_path: Path) -> None:
    from spark_destination.engine.preview import preview
    from spark_destination.engine.request_json import parse_request

    table = {
        "name": "t",
        "columns": [
            {"name": "id", "type": "LONG", "primary_key": True},
            {"name": "_fivetran_synced", "type": "UTC_DATETIME"},
        ],
    }
    created = preview(parse_request({"request": "create_table", "schema": "s", "table": table}))
    assert "CREATE TABLE `lake`.`s`.`t`" in created and "SET IDENTIFIER FIELDS `id`" in created
    truncated = preview(
        parse_request(
            {
                "request": "truncate",
                "schema": "s",
                "table": table,
                "utc_delete_before": "2024-01-01T00:00:00.123Z",
                "soft_deleted_column": "_fivetran_deleted",
            }
        )
    )
    assert "CAST('2024-01-01 00:00:00.123000' AS TIMESTAMP)" in truncated


def test_preview_on_a_hive_metastore_refuses_the_names_the_engine_refuses() -> None:
    from spark_destination.core.errors import InvalidRequestError
    from spark_destination.engine.preview import preview
    from spark_destination.engine.request_json import parse_request

    table = {"name": "Orders", "columns": [{"name": "id", "type": "LONG", "primary_key": True}]}
    request = {"request": "create_table", "schema": "s", "table": table}
    assert "CREATE TABLE `lake`.`s`.`Orders`" in preview(parse_request(request))
    hive = {"catalog_type": "hive", "catalog_uri": "thrift://127.0.0.1:9083"}
    with pytest.raises(InvalidRequestError, match="a Hive metastore stores names in lower case"):
        preview(parse_request({**request, "configuration": hive}))
