"""Which layout a table gets (pure): the configuration's layout keys for the table, made into a
format-neutral ``TableLayout`` for its columns, and what maintenance changes on a table whose
layout differs.

The choice and its measurements are in ``docs/architecture.md`` ("Lake-scale layout") and
``docs/benchmarks.md``. In short: a small batch's MERGE binds its keys as an ``IN`` filter on
the table's scan, and the scan skips whole row groups whose min/max statistics (of rows sorted
by the key) or bloom filter rule out every key. With ~70 existing random keys per batch, reading
at most a tenth of a table takes at least ~700 row groups that can be skipped one by one, so
the sorted layout uses small row groups; bloom filters drop the row groups whose key range
holds a batch's new keys, and the few small files that recent batches wrote (each spanning the
whole key range until compaction re-sorts them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Final, assert_never

from spark_destination.core.config import LayoutSettings, LayoutStyle
from spark_destination.core.model import FIVETRAN_ID, Column, DataType
from spark_destination.planner import ir
from spark_destination.planner.tables import FILTERABLE_KEY_TYPES
from spark_destination.planner.target import Target

# The layout settings of a table by schema and name (``DestinationConfig.layout_of``).
LayoutOf = Callable[[str, str], LayoutSettings]

# Plain tables: 4 MiB row groups (the layout tables had before layouts were configurable).
PLAIN_ROW_GROUP_BYTES: Final = 4 << 20
# A bloom filter gets this fraction of its row group's bytes: 32 KiB for 1 MiB row groups,
# ~22 bits per key of the bench's 12-column table (~11,600 rows per row group). Parquet sizes
# a filter by this maximum when it is not told the distinct count, as Iceberg's writer never
# is. Every key of a batch's IN filter is tested against the filter of each row group its
# min/max lets through, so a row group is read when any of ~120 keys is a false positive: at
# ~11 bits per key (1/64) a random-key batch at 16.5M rows read twice the rows; at ~45 (1/16)
# the filters were about a quarter of the table's bytes; at 1/32 a batch read 9 % more rows
# than at 1/16 but 16 % fewer bytes, of a table 12 % smaller (docs/benchmarks.md, "Lake
# scale").
BLOOM_FILTER_SHARE: Final = 32
# What Iceberg's read planning charges per file a task opens (its default is 4 MiB). It splits a
# file at its row groups and packs the splits into tasks by weight, each split weighing at
# least this much times (1 + its delete files), and every task reopens its file and rereads the
# footer and those delete files. At 4 MiB a 1 MiB row group with four delete files weighed 20
# MiB: a one-key scan of a 16.5M-row sorted table ran as 126 tasks, read 47 MB and took 1.3-1.9
# s; at zero it ran as 7, read 3.3 MB and took 0.2 s, and a random-key small batch read 48
# instead of 85 MB (docs/benchmarks.md, "Lake scale"). A quarter MiB (about a footer) still
# weighs many tiny files enough to spread them over several tasks.
READ_OPEN_FILE_BYTES: Final = 256 << 10
# Types Iceberg's bucket transform hashes (not boolean, float or double).
BUCKETABLE_TYPES: Final = frozenset(
    {
        DataType.SHORT,
        DataType.INT,
        DataType.LONG,
        DataType.DECIMAL,
        DataType.NAIVE_DATE,
        DataType.NAIVE_DATETIME,
        DataType.UTC_DATETIME,
        DataType.STRING,
        DataType.BINARY,
    }
)


def table_layout(
    settings: LayoutSettings, columns: Sequence[Column], key: Sequence[str]
) -> ir.TableLayout:
    """The layout of a table with ``columns`` whose rows are matched on ``key``."""
    version = int(settings.format_version.value)
    by_name = {c.name: c for c in columns}
    key_columns = [by_name[name] for name in key if name in by_name]
    match settings.table_layout:
        case LayoutStyle.PLAIN:
            return ir.TableLayout(
                format_version=version,
                row_group_bytes=PLAIN_ROW_GROUP_BYTES,
                read_open_file_bytes=READ_OPEN_FILE_BYTES,
            )
        case LayoutStyle.SORTED | LayoutStyle.BUCKETED:
            row_group = settings.row_group_bytes
            # Sorted by name: a set of columns (the table's properties hold no order).
            bloom = tuple(sorted(c.name for c in key_columns if c.type in FILTERABLE_KEY_TYPES))
            bucketable = [c.name for c in key_columns if c.type in BUCKETABLE_TYPES]
            bucketed = settings.table_layout is LayoutStyle.BUCKETED and bool(bucketable)
            bucket = bucketable[0] if bucketed else None
            return ir.TableLayout(
                format_version=version,
                row_group_bytes=row_group,
                sort_by=tuple(c.name for c in key_columns),
                bloom_filter=bloom,
                bloom_filter_bytes=row_group // BLOOM_FILTER_SHARE if bloom else 0,
                bucket_by=bucket,
                buckets=settings.bucket_count if bucket else 0,
                read_open_file_bytes=READ_OPEN_FILE_BYTES,
            )
        case _:
            assert_never(settings.table_layout)


def with_layouts(plan: ir.Plan, layout_of: LayoutOf | None, target: Target) -> ir.Plan:
    """``plan`` with the configured layout on every table it creates or rewrites (CreateTable,
    AlterTable's and Migrate's ``CREATE OR REPLACE … AS SELECT``, Migrate's copies), and the
    write order of every key it changes in place: each is planned for its own columns and
    key, so this one pass covers every planner."""
    if layout_of is None or not target.lays_out_tables:
        return plan
    ops: list[ir.Op] = []
    for op in plan.ops:
        ops.append(_without_repeated_order(ops[-1] if ops else None, _laid_out(op, layout_of)))
    return replace(plan, ops=tuple(ops))


def _without_repeated_order(previous: ir.Op | None, op: ir.Op) -> ir.Op:
    """``op`` without the write order when it sets a key on the table created just before with
    that order (CreateTable's key, a Migrate copy's): setting it again is one more Iceberg
    commit. A key set on a table an earlier attempt created keeps its order: that attempt may
    have stopped before setting it."""
    if (
        isinstance(previous, ir.CreateTableOp)
        and isinstance(op, ir.SetPrimaryKeyOp)
        and previous.layout is not None
        and previous.table == op.table
        and previous.layout.sort_by == op.write_order
    ):
        return replace(op, write_order=None)
    return op


def _laid_out(op: ir.Op, layout_of: LayoutOf) -> ir.Op:
    match op:
        case ir.CreateTableOp():
            columns: Sequence[Column] = op.columns
        case ir.RewriteTableOp():
            columns = [change.target for change in op.columns]
        case ir.RewriteToHistoryOp():
            start = Column(name=op.start, type=DataType.UTC_DATETIME, primary_key=True)
            columns = [*op.columns, start]
        case ir.SetPrimaryKeyOp():
            # Only the key's names matter for the order (the types choose bloom filters).
            key = [Column(name=c, type=DataType.STRING, primary_key=True) for c in op.columns]
            order = configured_layout(layout_of, op.table, key).sort_by
            return replace(op, write_order=order)
        case _:
            return op
    return replace(op, layout=configured_layout(layout_of, op.table, columns))


def configured_layout(
    layout_of: LayoutOf, table: ir.TableRef, columns: Sequence[Column]
) -> ir.TableLayout:
    """The layout the configuration gives an existing ``table`` with ``columns``."""
    return table_layout(layout_of(table.schema, table.name), columns, _key(columns))


def _key(columns: Sequence[Column]) -> tuple[str, ...]:
    """The columns rows are matched on: the primary key, else ``_fivetran_id`` if any."""
    key = tuple(c.name for c in columns if c.primary_key)
    if key:
        return key
    return tuple(c.name for c in columns if c.name == FIVETRAN_ID)


def layout_change(
    table: ir.TableRef, layout: ir.TableLayout, current: ir.TableLayout
) -> ir.SetLayoutOp | None:
    """What gives an existing table ``layout``, or None when it has it. The format version is
    only ever raised (Iceberg cannot go back)."""
    wanted = _never_lower(layout, current)
    if wanted == current:
        return None
    return ir.SetLayoutOp(table=table, layout=wanted, current=current)


def rewrites_files(change: ir.SetLayoutOp) -> bool:
    """Whether the files already written must be rewritten to take ``change``: not when only
    how reads are planned or the size of new bloom filters changes (a file's filters keep
    working at their size; compaction writes the new one)."""
    current = change.current
    kept = replace(
        change.layout,
        read_open_file_bytes=current.read_open_file_bytes,
        bloom_filter_bytes=current.bloom_filter_bytes,
    )
    return kept != current


def _never_lower(layout: ir.TableLayout, current: ir.TableLayout) -> ir.TableLayout:
    if layout.format_version >= current.format_version:
        return layout
    return replace(layout, format_version=current.format_version)
