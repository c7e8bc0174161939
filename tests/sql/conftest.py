"""Golden SQL snapshots: one pretty-printed ``.sql`` file per operation and dialect.

Layout: ``snapshots/<operation>/<dialect>.sql`` at the repository root, so a reviewer reads
each statement as a plain SQL file in diffs. Update with ``pytest --snapshot-update``.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation
from syrupy.types import SnapshotIndex

from spark_destination.core.errors import InvalidRequestError
from spark_destination.dialects.base import Dialect
from spark_destination.dialects.registry import DIALECTS
from spark_destination.dialects.render import render
from spark_destination.dialects.rendered import Form, Statement
from spark_destination.engine.preview import checked
from spark_destination.planner.ir import (
    CreateNamespaceOp,
    Op,
    SetLayoutOp,
    SetPrimaryKeyOp,
    TableRef,
)
from spark_destination.planner.tables import check_names

SNAPSHOT_ROOT = Path(__file__).resolve().parents[2] / "snapshots"
_CASE = re.compile(r"\[(?P<case>[^\]-]+)-(?P<dialect>[^\]]+)\]$")


def _case(test_location: PyTestLocation) -> tuple[str, str]:
    match = _CASE.search(test_location.testname)
    if match is None:
        raise ValueError(
            f"snapshot tests must be parametrized as [case-dialect]: {test_location.testname}"
        )
    return match["case"], match["dialect"]


class SqlSnapshotExtension(SingleFileSnapshotExtension):
    file_extension = "sql"
    _write_mode = WriteMode.TEXT

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(SNAPSHOT_ROOT / _case(test_location)[0])

    @classmethod
    def discovery_dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(SNAPSHOT_ROOT)

    @classmethod
    def get_file_basename(cls, *, test_location: PyTestLocation, index: SnapshotIndex) -> str:
        return _case(test_location)[1]

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: SnapshotIndex = 0) -> str:
        return _case(test_location)[1]


@pytest.fixture
def sql_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(SqlSnapshotExtension)


# --- rendering helpers shared by the golden tests -------------------------------------------


def golden_params(cases: object) -> list[tuple[str, str]]:
    """``(case, dialect)`` for every case and every registered dialect."""
    assert isinstance(cases, dict)
    return [(case, name) for case in cases for name in DIALECTS]


def rendered(op: Op, dialect: str) -> tuple[Statement, ...]:
    return render(op, DIALECTS[dialect])


# The ops a dialect renders no statement for, with why: their golden says so instead of being
# empty, and any other op that renders nothing fails its golden test.
_NO_LAYOUT = (
    "Delta tables get no configured layout, so this op is never planned for Delta "
    "(Target.lays_out_tables is false). Maintenance clusters a Delta table's files by its "
    "key with OPTIMIZE ... ZORDER BY (snapshots/maintain); liquid clustering "
    "(ALTER TABLE ... CLUSTER BY), Databricks' other way, cannot be combined with ZORDER "
    "BY, so the destination does not use it."
)
RENDERS_NOTHING: dict[tuple[type[Op], str], str] = {
    (SetLayoutOp, "spark_delta"): _NO_LAYOUT,
    (SetPrimaryKeyOp, "spark_delta"): (
        "Delta Lake outside Databricks has no primary-key DDL (ADD CONSTRAINT ... PRIMARY KEY "
        "does not parse, SET NOT NULL on a nullable column fails): the key lives in the "
        "table's fivetran.columns property, which the same plan sets (snapshots/"
        "set_identifier_fields/databricks_delta.sql is the Databricks form)."
    ),
    (SetLayoutOp, "databricks_delta"): _NO_LAYOUT,
}


def renders_nothing(op: Op, dialect: str) -> str:
    """The golden of an op the dialect renders no statement for: why (``RENDERS_NOTHING``)."""
    reason = RENDERS_NOTHING.get((type(op), dialect))
    assert reason is not None, f"{dialect} renders nothing for {op!r}; say why in RENDERS_NOTHING"
    said = f"{dialect} renders no statement for {type(op).__name__}: {reason}"
    return "".join(f"-- {line}\n" for line in textwrap.wrap(said, width=96))


def refusal(error: InvalidRequestError) -> str:
    """The golden of what a dialect refuses to plan: the message the request answers."""
    return f"-- refused before anything runs: {error}\n"


def _names(op: Op) -> list[tuple[str, str, str | None]]:
    """The (catalog, schema, table) names an op uses (a namespace op: no table)."""
    if isinstance(op, CreateNamespaceOp):
        return [(op.catalog, op.schema, None)]
    refs = [getattr(op, f.name) for f in dataclasses.fields(op)]
    return [(r.catalog, r.schema, r.name) for r in refs if isinstance(r, TableRef)]


def golden_text(op: Op, dialect: str, form: Form | None = None) -> str:
    """The golden file of one op: its statements (or one alternative form), one per
    paragraph; or, where the dialect refuses a name the op uses, the refusal (the planner
    asks ``check_names`` for every request, so such an op is never planned)."""
    try:
        for names in _names(op):
            check_names(DIALECTS[dialect], *names)
    except InvalidRequestError as error:
        return refusal(error)
    statements = rendered(op, dialect)
    if not statements:
        return renders_nothing(op, dialect)
    texts = []
    for statement in statements:
        if statement.directive:
            sql = None  # runs no SQL (staging, the catalog read)
        else:
            sql = statement.sql if form is None else statement.form(form)
        if sql is None:  # a dialect without this form (no key filter: ``key_filter_slots``)
            return f"-- {dialect} renders no form for: {form.value if form else 'the op'}\n"
        texts.append(sql)
    return ";\n\n".join(texts) + "\n"


def assert_parses_back(statement: Statement, dialect: Dialect) -> None:
    """Every form of ``statement`` is one statement the dialect's own sqlglot reader parses
    strictly (a command: as a command), and printing it again changes nothing (rendering is a
    fixpoint): the check ``preview`` makes."""
    assert checked((statement,), dialect) == (statement,)
