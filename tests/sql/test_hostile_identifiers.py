"""Identifiers of every kind (generated with hypothesis): every statement the engine renders for
every request family parses back with Spark's sqlglot reader, and every schema, table and column
name survives as one intact identifier (a name that broke out of its quotes would not).

Pure: planner + renderer only. ``HYPOTHESIS_EXAMPLES`` raises the number of examples.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import sqlglot
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from spark_destination.core.names import RESERVED_PREFIX, path_problem
from spark_destination.dialects.base import Dialect
from spark_destination.dialects.registry import DIALECTS
from spark_destination.dialects.render import render_plan
from spark_destination.engine.preview import plan_for
from spark_destination.engine.request_json import parse_request
from spark_destination.planner.target import NameKind

EXAMPLES = int(os.environ.get("HYPOTHESIS_EXAMPLES", "15"))

# Names that have broken SQL generators before, plus arbitrary text (any printable character,
# whitespace, newlines and tabs included; no surrogates, no NUL).
NASTY = [
    "`",
    "``",
    "a`b",
    "`; DROP TABLE x; --",
    "select",
    "from",
    "table",
    "order",
    "--x",
    "/*x*/",
    "'",
    "''",
    '"',
    "a.b",
    " ",
    " lead",
    "trail ",
    "x\ny",
    "tab\there",
    "ünïcødé",
    "数据",
    "${x}",
    "?",
    ":x",
    "\\",
    "a,b",
    "(x)",
    "1",
    "e1",
    "NULL",
]
TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=24,
)
NAME = st.one_of(st.sampled_from(NASTY), TEXT)
# Schema and table names are also folder names (``names.path_problem``): those that are not
# one plain folder are refused before any SQL exists (tests/unit/test_names.py).
PATH_NAME = NAME.filter(lambda n: path_problem(n) is None)
# Or a name every catalog takes (Spark's session catalog: ASCII letters, digits and '_'), so a
# dialect on such a catalog still draws schema and table names it keeps; columns stay hostile.
SCHEMA_NAME = st.one_of(PATH_NAME, st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True))
RESERVED_PREFIXES = ("_fivetran", "__sd")


def _usable(name: str) -> bool:
    return not name.casefold().startswith(RESERVED_PREFIXES)


COLUMN_NAMES = st.lists(
    NAME.filter(_usable), min_size=3, max_size=5, unique_by=lambda n: n.casefold()
)
SYNCED, DELETED = "_fivetran_synced", "_fivetran_deleted"
START, END, ACTIVE = "_fivetran_start", "_fivetran_end", "_fivetran_active"
FILE_PARAMS = {"null_string": "null-x", "unmodified_string": "unmod-x"}


def _table(name: str, key: str, others: list[str], *, history: bool = False) -> dict[str, Any]:
    columns: list[dict[str, Any]] = [{"name": key, "type": "INT", "primary_key": True}]
    if history:
        columns.append({"name": START, "type": "UTC_DATETIME", "primary_key": True})
    columns += [{"name": n, "type": "STRING"} for n in others]
    columns.append({"name": SYNCED, "type": "UTC_DATETIME"})
    if history:
        columns += [
            {"name": END, "type": "UTC_DATETIME"},
            {"name": ACTIVE, "type": "BOOLEAN"},
        ]
    else:
        columns.append({"name": DELETED, "type": "BOOLEAN"})
    return {"name": name, "columns": columns}


def _requests(
    schema: str, table: str, names: list[str], other: str
) -> list[tuple[dict[str, Any], set[str]]]:
    """Every request family, each with the names its statements must render (every statement
    names the table by ``schema`` and ``table``; the rest are the columns and tables the
    request itself touches)."""
    key, first, *rest = names
    plain = _table(table, key, [first, *rest])
    history = _table(table, key, [first, *rest], history=True)
    files = {"replace_files": ["r.csv"], "update_files": ["u.csv"], "delete_files": ["d.csv"]}
    changed = _table(table, key, [first, *rest])
    changed["columns"] = [
        {**c, "type": "LONG"} if c["name"] == key else c for c in changed["columns"]
    ] + [{"name": other, "type": "INT"}]
    retyped = _table(table, key, [first, *rest])
    retyped["columns"] = [
        {**c, "type": "INT"} if c["name"] == first else c for c in retyped["columns"]
    ]
    base: dict[str, Any] = {"schema": schema}
    migrate = {"request": "migrate", "table_name": table, "existing_table": plain}
    qualified = {schema, table}
    every_column = qualified | set(names)
    # Each operation with the names it renders: a copy or a rewrite selects every column; a
    # column operation names its columns only.
    operations: list[tuple[dict[str, Any], set[str]]] = [
        ({"rename_column": {"from_column": first, "to_column": other}}, {first, other}),
        ({"copy_column": {"from_column": first, "to_column": other}}, {first, other}),
        ({"copy_table": {"from_table": table, "to_table": other}}, set(names) | {other}),
        ({"rename_table": {"from_table": table, "to_table": other}}, set(names) | {other}),
        ({"drop_table": True}, set()),
        ({"update_column_value": {"column": first, "value": "v"}}, {first}),
        (
            {
                "add_column_with_default_value": {
                    "column": other,
                    "column_type": "STRING",
                    "default_value": "d",
                }
            },
            {other},
        ),
        (
            {
                "copy_table_to_history_mode": {
                    "from_table": table,
                    "to_table": other,
                    "soft_deleted_column": DELETED,
                }
            },
            set(names) | {other},
        ),
        (
            {
                "table_sync_mode_migration": {
                    "type": "SOFT_DELETE_TO_HISTORY",
                    "soft_deleted_column": DELETED,
                }
            },
            set(names),
        ),
    ]
    return [
        ({**base, "request": "create_table", "table": plain}, every_column),
        # Read from the catalog, not by SQL: its plan renders nothing, and must plan.
        ({**base, "request": "describe_table", "table_name": table}, set()),
        (
            {**base, "request": "write_batch", "table": plain, **files, "file_params": FILE_PARAMS},
            every_column,
        ),
        (
            {
                **base,
                "request": "write_history_batch",
                "table": history,
                "earliest_start_files": ["e.csv"],
                **files,
                "file_params": FILE_PARAMS,
            },
            every_column,
        ),
        (
            {
                **base,
                "request": "truncate",
                "table_name": table,
                "existing_table": plain,
                "synced_column": SYNCED,
                "utc_delete_before": "2024-01-01T00:00:00Z",
                "soft_deleted_column": DELETED,
            },
            qualified,
        ),
        # The key widened in place and a column added.
        (
            {**base, "request": "alter_table", "table": changed, "existing_table": plain},
            qualified | {key, other},
        ),
        # STRING to INT: the table is rewritten, every column selected.
        (
            {**base, "request": "alter_table", "table": retyped, "existing_table": plain},
            every_column,
        ),
        *(
            (
                {**base, **migrate, "operation": op, "existing_tables": {other: None}},
                qualified | renders,
            )
            for op, renders in operations
        ),
    ]


def _identifiers(sql: str, read: str) -> set[str]:
    parsed = sqlglot.parse(sql, read=read, error_level=sqlglot.ErrorLevel.RAISE)
    return {i.name for tree in parsed if tree is not None for i in tree.find_all(exp.Identifier)}


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@pytest.mark.parametrize("dialect", list(DIALECTS.values()), ids=list(DIALECTS))
@given(
    schema=SCHEMA_NAME,
    table=SCHEMA_NAME.filter(lambda n: not n.startswith(RESERVED_PREFIX)),
    names=COLUMN_NAMES,
    other=SCHEMA_NAME.filter(_usable),
)
def test_every_statement_parses_and_keeps_every_name_intact(
    dialect: Dialect, schema: str, table: str, names: list[str], other: str
) -> None:
    if other.casefold() in {n.casefold() for n in names} or other == table:
        other = other + "_2"
    # Names the dialect's catalog refuses are refused before planning (Unity Catalog: see
    # test_databricks_delta); every other name must come through intact.
    named = ((NameKind.SCHEMA, schema), (NameKind.TABLE, table), (NameKind.TABLE, other))
    assume(all(dialect.name_problem(kind, name) is None for kind, name in named))
    for request, expected in _requests(schema, table, names, other):
        plan = plan_for(parse_request(request), dialect)
        seen: set[str] = set()
        for statement in render_plan(plan, dialect):
            # Every form the runtime may run (e.g. the MERGE without its fold branch).
            texts = [statement.sql, *(sql for _form, sql in statement.forms)]
            for sql in texts:
                if sql is not None:
                    seen |= _identifiers(sql, dialect.sqlglot_dialect)
        if plan.noop_reason is None:
            assert expected <= seen, (request["request"], request.get("operation"), expected - seen)
