"""Planning of AlterTable: the request carries the complete target definition.

Each column of the target is classified against the stored one:

* unchanged, or changed in Fivetran metadata only (SHORT <-> INT, STRING <-> JSON/XML/
  NAIVE_TIME, string byte length): only the ``fivetran.columns`` property changes (narrowing
  ones such as INT -> SHORT are checked first);
* widened in place where the target can (``Target.widens_in_place``);
* anything else (and any column joining the primary key: it must become NOT NULL, which
  Iceberg cannot do in place; every target takes the same path) needs a rewrite of the
  table: one ``CREATE OR REPLACE TABLE ... AS SELECT``.

Every plan first runs read-only checks (values convert, the new key has no NULL and is
unique), so a request that cannot succeed changes nothing. The ``fivetran.columns`` property
is written last: it is what DescribeTable trusts, so after a failure between two steps the
described table still differs from the request, and the retried request is planned again from
that state and converges (every step is idempotent when re-planned).
"""

from __future__ import annotations

from dataclasses import replace

from spark_destination.core.errors import InvalidRequestError, UnsupportedOperationError
from spark_destination.core.model import DataType, Table
from spark_destination.core.requests import AlterTableRequest
from spark_destination.planner import metadata
from spark_destination.planner.ir import (
    AddColumnsOp,
    AlterColumnTypeOp,
    CheckConversionsOp,
    CheckUniqueKeyOp,
    ColumnChange,
    DropColumnsOp,
    DropNotNullOp,
    Op,
    Plan,
    RewriteTableOp,
    SetPrimaryKeyOp,
    SetPropertiesOp,
    TableRef,
)
from spark_destination.planner.tables import table_ref, validate_columns
from spark_destination.planner.target import Target


def plan_alter_table(
    request: AlterTableRequest, current: Table | None, *, catalog: str, target: Target
) -> Plan:
    ref = table_ref(catalog, request.schema, request.table.name, target=target)
    validate_columns(request.table)
    if current is None:
        raise InvalidRequestError(
            f"table {request.schema!r}.{request.table.name!r} does not exist; AlterTable cannot "
            "change it"
        )
    _check_names(request.table, current)
    changes, dropped = target_columns(request, current)
    final = tuple(c.target for c in changes)
    if final == current.columns:
        return Plan(ops=(), noop_reason="the table already has the requested definition")

    for change in changes:
        source = change.source
        if source is not None and not target.convertible(source, change.target):
            raise UnsupportedOperationError(
                f"column {source.name!r} of table {current.name!r} cannot change from "
                f"{source.fivetran_type} to {change.target.fivetran_type}: no conversion exists "
                "between these types; the table was not changed"
            )

    old_key = current.key
    new_key = tuple(c.target.name for c in changes if c.target.primary_key)
    key_changes = tuple(c for c in changes if c.target.primary_key)
    joining = tuple(c for c in key_changes if c.source is None or not c.source.primary_key)
    leaving = tuple(c.target.name for c in changes if c.source is not None and c.source.primary_key)
    leaving = tuple(n for n in leaving if n not in new_key)
    rewritten = tuple(c for c in changes if _needs_rewrite(target, c))
    key_set_changed = set(new_key) != set(old_key)

    if key_set_changed or any(c in rewritten for c in key_changes):
        refused = [c.target for c in key_changes if not target.key_type_allowed(c.target.type)]
        if refused:
            types = "/".join(t.name for t in DataType if not target.key_type_allowed(t))
            raise UnsupportedOperationError(
                f"table {current.name!r}: {types} column(s) {_names([c.name for c in refused])} "
                f"cannot be in the primary key of a table in {target.table_format}; the table "
                "was not changed"
            )

    ops: list[Op] = []
    checked = tuple(
        c for c in changes if c.source is not None and c.target != c.source and _checked(target, c)
    )
    if checked or joining:
        ops.append(CheckConversionsOp(table=ref, conversions=checked, not_null=joining))
    # A conversion may map distinct values to one (e.g. '01' and '1' -> 1); widening cannot.
    converted_key = any(c in rewritten for c in key_changes)
    if new_key and (key_set_changed or converted_key):
        ops.append(CheckUniqueKeyOp(table=ref, key=key_changes))

    key_needs_rewrite = bool(joining or (old_key and not new_key))
    drops_need_rewrite = bool(dropped) and not target.renames_columns_in_place
    if rewritten or drops_need_rewrite or (key_needs_rewrite and not target.changes_key_in_place):
        ops.append(RewriteTableOp(table=ref, columns=changes))
        if new_key:
            ops.append(SetPrimaryKeyOp(table=ref, columns=new_key))
        # The query keeps a required column required; only key columns may stay so.
        ops += [DropNotNullOp(table=ref, column=name) for name in leaving]
    else:
        ops += _in_place(ref, changes, dropped, new_key, leaving, key_set_changed, target)
    ops.append(
        SetPropertiesOp(table=ref, properties=((metadata.PROPERTY, metadata.encode(final)),))
    )
    return Plan(ops=tuple(ops))


def target_columns(
    request: AlterTableRequest, current: Table
) -> tuple[tuple[ColumnChange, ...], tuple[str, ...]]:
    """The altered table's columns (stored order, then new ones in request order) and the
    stored columns dropped (only with ``drop_columns``; otherwise a column the request lacks
    is kept as it is, except that it leaves the primary key)."""
    requested = {c.name: c for c in request.table.columns}
    changes: list[ColumnChange] = []
    dropped: list[str] = []
    for stored in current.columns:
        wanted = requested.get(stored.name)
        if wanted is None:
            if request.drop_columns:
                dropped.append(stored.name)
                continue
            # Kept, but the request's primary key is the whole key: a column the request
            # lacks is no longer part of it (the tester's key swap old_pk -> new_pk).
            wanted = replace(stored, primary_key=False)
        elif (
            wanted.type is DataType.DECIMAL
            and stored.type is DataType.DECIMAL
            and wanted.decimal is None
        ):
            # No params means "no change" here, never a silent rescale to the default.
            wanted = replace(wanted, decimal=stored.decimal)
        changes.append(ColumnChange(source=stored, target=wanted))
    changes += [
        ColumnChange(source=None, target=c)
        for c in request.table.columns
        if current.column(c.name) is None
    ]
    return tuple(changes), tuple(dropped)


def _in_place(
    ref: TableRef,
    changes: tuple[ColumnChange, ...],
    dropped: tuple[str, ...],
    new_key: tuple[str, ...],
    leaving: tuple[str, ...],
    key_set_changed: bool,
    target: Target,
) -> list[Op]:
    ops: list[Op] = []
    added = tuple(c.target for c in changes if c.source is None)
    if added:
        ops.append(AddColumnsOp(table=ref, columns=added))
    for change in changes:
        if change.source is not None and target.widens_in_place(change.source, change.target):
            ops.append(AlterColumnTypeOp(table=ref, column=change.target))
    if key_set_changed:
        # Joining columns only where the target changes the key in place (checked above: no
        # NULL); setting the key makes them NOT NULL. Before dropping a column that left the
        # key: a key column cannot be dropped.
        ops.append(SetPrimaryKeyOp(table=ref, columns=new_key))
        ops += [DropNotNullOp(table=ref, column=name) for name in leaving]
    if dropped:
        ops.append(DropColumnsOp(table=ref, columns=dropped))
    return ops


def _needs_rewrite(target: Target, change: ColumnChange) -> bool:
    source = change.source
    if source is None:
        return False
    return not (
        target.same_storage(source, change.target) or target.widens_in_place(source, change.target)
    )


def _checked(target: Target, change: ColumnChange) -> bool:
    assert change.source is not None
    return target.conversion_can_fail(change.source, change.target)


def _check_names(requested: Table, current: Table) -> None:
    """Spark resolves column names case-insensitively: two names differing only in case
    would collide in the table."""
    stored = {c.name.lower(): c.name for c in current.columns}
    for column in requested.columns:
        other = stored.get(column.name.lower())
        if other is not None and other != column.name:
            raise InvalidRequestError(
                f"column {column.name!r} of table {requested.name!r} differs only in case from "
                f"the existing column {other!r}; Spark treats them as the same column"
            )
    lowered = [c.name.lower() for c in requested.columns]
    clashes = sorted({c.name for c in requested.columns if lowered.count(c.name.lower()) > 1})
    if clashes:
        raise InvalidRequestError(
            f"table {requested.name!r} declares columns {_names(clashes)} that differ only in "
            "case; Spark treats them as the same column"
        )


def _names(names: list[str]) -> str:
    return ", ".join(repr(n) for n in names)
