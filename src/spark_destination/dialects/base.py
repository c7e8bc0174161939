"""The ``Dialect`` object: everything that makes one SQL target differ from another.

A dialect is data, not code: the sqlglot dialect its SQL is built, printed and parsed back
with; how each Fivetran type is declared and stored; the table format's properties and
primary-key DDL; its templates folder (falling back to ``templates/common``); and capability
flags. The lowering modules (``dialects/lowering``) read it; the planner sees it only through
the ``planner.target.Target`` protocol, which ``Dialect`` implements. sqlglot's one generator
per dialect and SQLMesh's engine adapters (``DIALECT``, ``SUPPORTS_*``) are the models.
"""

from __future__ import annotations

import dataclasses
import enum
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Final, Protocol, assert_never

from sqlglot import exp

from spark_destination.core.config import CatalogType
from spark_destination.core.model import Column, DataType
from spark_destination.dialects import values
from spark_destination.dialects.skeletons import Skeletons
from spark_destination.planner.ir import TableLayout
from spark_destination.planner.target import Maintenance, NameKind

# Every Fivetran type but UNSPECIFIED; a dialect's type table must name each of them.
DECLARED_TYPES: Final = frozenset(t for t in DataType if t is not DataType.UNSPECIFIED)

# Distinct pending keys a merge flush binds as an IN filter on the table's scan (both
# dialects). Past Iceberg's 200 literals the filter no longer skips files, but it still drops
# every other row before the MERGE's join: at 16.5M rows a flush of 6,000 random keys took
# 18-23 s with it against 68-70 s without (loaded machine). Binding costs one JVM call per key.
FLUSH_FILTER_SLOTS: Final = 8192


class DecimalWidening(enum.Enum):
    """Which DECIMAL(p, s) -> DECIMAL(p', s') changes the table format makes in place."""

    # Iceberg: the precision grows, the scale stays.
    PRECISION = "precision up, same scale"
    # Delta type widening: neither the scale nor the integer digits (p - s) shrink, and
    # something grows: p' - p >= s' - s >= 0.
    PRECISION_AND_SCALE = "integer digits and scale never shrink"


@dataclass(frozen=True, slots=True, kw_only=True)
class NameRules:
    """What a catalog refuses in catalog, schema and table names beyond ``core.names``."""

    # Characters refused anywhere in such a name.
    refused: frozenset[str] = frozenset()
    # The only characters the catalog takes (empty: any not ``refused``), and how messages
    # describe them.
    allowed: frozenset[str] = frozenset()
    allowed_text: str = ""
    # The catalog stores names in lower case: an upper-case letter is refused, so two names
    # that differ only in case can never become one table.
    lower_case: bool = False
    # The most characters the catalog keeps in a name (0: no limit beyond ``core.names``).
    max_length: int = 0
    # The catalog as messages name it.
    catalog: str = "the catalog"

    def problem(self, name: str) -> str | None:
        if found := sorted(self.refused & set(name)):
            shown = ", ".join(repr(ch) for ch in found)
            return f"holds {shown}, which {self.catalog} refuses in names"
        if self.allowed and (found := sorted(set(name) - self.allowed)):
            shown = ", ".join(repr(ch) for ch in found)
            return f"holds {shown}; {self.catalog} takes only {self.allowed_text} in names"
        if self.lower_case and name != name.lower():
            return (
                f"has upper-case letters; {self.catalog} stores names in lower case, so it "
                f"would become {name.lower()!r} (and collide with that name)"
            )
        if self.max_length and len(name) > self.max_length:
            return f"is {len(name)} characters long; {self.catalog} takes at most {self.max_length}"
        return None


# What a Hive metastore (2.3, as pyspark ships it; Glue's Hive-compatible API has the same
# rules) takes as a database or table name, checked before anything runs: it refuses any
# character but ASCII letters, digits and '_' (``MetaStoreUtils.validateName``; Iceberg's
# HiveCatalog answers "Invalid Hive object"), stores names in lower case, and Iceberg's commit
# lock (``HIVE_LOCKS.HL_DB``/``HL_TABLE``, VARCHAR(128)) fails for a longer name, which Iceberg
# retried for minutes and then reported as "already exists". Column names are Iceberg's own
# (the metastore's copy of the schema takes any).
HIVE_METASTORE_NAMES: Final = NameRules(
    allowed=frozenset(string.ascii_letters + string.digits + "_"),
    allowed_text="ASCII letters, digits and '_'",
    lower_case=True,
    max_length=128,
    catalog="a Hive metastore",
)


# The templates each maintenance style renders with (``lowering.maintenance``).
MAINTENANCE_TEMPLATES: Final = {
    Maintenance.SNAPSHOT_PROCEDURES: ("maintenance_call", "table_health"),
    Maintenance.OPTIMIZE_AND_VACUUM: ("optimize", "vacuum", "table_health"),
}


class LayoutProperties(Protocol):
    """How a table format keeps a ``TableLayout`` in table properties (partitioning and the
    write order are DDL, rendered by ``lowering.layout``)."""

    @property
    def version_property(self) -> str:
        """The property holding the format version: a rewrite (CREATE OR REPLACE) leaves it
        out, so a table keeps its version (Iceberg refuses to lower it)."""
        ...

    def properties(self, layout: TableLayout) -> tuple[tuple[str, str], ...]:
        """The table properties of ``layout``."""
        ...

    def stored(
        self,
        properties: Mapping[str, str],
        sort_by: tuple[str, ...],
        bucket: tuple[str, int] | None,
    ) -> TableLayout:
        """The layout of a table with these properties, write order and bucket partition."""
        ...


class KeyStyle(enum.Enum):
    """How a table format records the primary key, and the templates that write it."""

    # Iceberg: ``ALTER TABLE t SET IDENTIFIER FIELDS a, b`` (one statement replaces the key).
    IDENTIFIER_FIELDS = ("set_primary_key",)
    # Delta on Databricks: an informational ``PRIMARY KEY`` constraint (drop, make the key's
    # columns NOT NULL, then add).
    PRIMARY_KEY_CONSTRAINT = ("drop_primary_key", "set_not_null", "add_primary_key")
    # Delta Lake outside Databricks has no primary-key DDL: the key lives only in the
    # destination's column metadata (``planner.metadata``), which every key change rewrites.
    COLUMN_METADATA = ()

    @property
    def templates(self) -> tuple[str, ...]:
        names: tuple[str, ...] = self.value
        return names


@dataclass(frozen=True, slots=True, kw_only=True)
class Dialect:
    name: str
    # The table format as users know it (messages) and as ``USING`` names it (DDL).
    table_format: str
    using: str
    # The sqlglot dialect the SQL is built, printed and strictly parsed back with, and the
    # sqlglot version the golden snapshots were reviewed with (``pyproject.toml`` pins it).
    sqlglot_dialect: str
    sqlglot_version: str
    # This dialect's statement skeletons (``templates/<folder>``), checked when it is built.
    skeletons: Skeletons
    # Properties every table gets, in order, before the destination's own.
    table_properties: tuple[tuple[str, str], ...]
    # The declared SQL type name of each Fivetran type (DECIMAL takes its params).
    type_names: Mapping[DataType, str]
    # Types the table format stores as another Fivetran type (Iceberg: SHORT as INT).
    stored_as: Mapping[DataType, DataType]
    # In-place widenings the table format allows, as (stored type, new type).
    widenings: frozenset[tuple[DataType, DataType]]
    # Which DECIMAL changes happen in place (None: none).
    decimal_widening: DecimalWidening | None
    # Types a primary-key column may not have.
    key_types_refused: frozenset[DataType]
    key_style: KeyStyle
    # ``planner.target.Target.changes_key_in_place``.
    changes_key_in_place: bool
    # Parameter markers per key column in the batch MERGE's key-filter form (0: no such form):
    # a batch with at most this many keys binds them as an IN filter on the table's scan.
    key_filter_slots: int
    # ``planner.target.Target.flush_filter_slots``.
    flush_filter_slots: int
    # ``planner.target.Target.name_problem`` beyond ``core.names``.
    names: NameRules = NameRules()
    # What the metastore behind the catalog refuses in schema and table names (``for_catalog``);
    # a catalog's own (Spark) name is not the metastore's.
    metastore_names: NameRules = NameRules()
    # ``planner.target.Target.maintenance`` and ``minimum_retention``.
    maintenance: Maintenance
    minimum_retention: timedelta = timedelta(0)
    # ``planner.target.Target.lays_out_tables``: how a ``TableLayout`` becomes table
    # properties and is read back from them (None: the dialect renders no layout).
    layout: LayoutProperties | None = None
    # Whether the runtime can execute this dialect here, and if not what is missing.
    executable: bool
    missing: str = ""
    # STRING columns with Fivetran's ``string_byte_length`` n are declared ``VARCHAR(n)``,
    # a length the table format enforces on every write (``Target.string_length_limit``).
    string_lengths: bool = False
    # ``planner.target.Target.renames_columns_in_place``.
    renames_columns_in_place: bool = True
    # Characters the table format stores in a column name only behind a name mapping, and the
    # properties that turn the mapping on (Delta: column mapping), added to a table created,
    # rewritten or given such a column; a table without such a name never gets them.
    mapped_name_characters: frozenset[str] = frozenset()
    name_mapping: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if set(self.type_names) != DECLARED_TYPES:
            raise ValueError(f"dialect {self.name}: the type table must name every type")
        self.skeletons.check(self.name)
        for style, needed in (
            (self.key_style.name, self.key_style.templates),
            (self.maintenance.name, MAINTENANCE_TEMPLATES[self.maintenance]),
        ):
            if missing := set(needed) - self.skeletons.available:
                raise ValueError(f"dialect {self.name}: {style} needs templates {sorted(missing)}")

    # --- types ----------------------------------------------------------------------------

    def sql_type(self, column: Column) -> exp.DataType:
        """The SQL type ``column`` is declared with."""
        match column.type:
            case DataType.UNSPECIFIED:
                raise ValueError(f"column {column.name!r} has no data type (UNSPECIFIED)")
            case DataType.DECIMAL:
                params = column.decimal_params
                return exp.DataType.build(
                    exp.DataType.Type.DECIMAL,
                    expressions=[
                        exp.DataTypeParam(this=exp.Literal.number(params.precision)),
                        exp.DataTypeParam(this=exp.Literal.number(params.scale)),
                    ],
                )
            case DataType.STRING if self.string_length_limit(column) is not None:
                return exp.DataType.build(
                    exp.DataType.Type.VARCHAR,
                    expressions=[
                        exp.DataTypeParam(this=exp.Literal.number(column.string_byte_length))
                    ],
                )
            case (
                DataType.BOOLEAN
                | DataType.SHORT
                | DataType.INT
                | DataType.LONG
                | DataType.FLOAT
                | DataType.DOUBLE
                | DataType.NAIVE_DATE
                | DataType.NAIVE_DATETIME
                | DataType.UTC_DATETIME
                | DataType.BINARY
                | DataType.STRING
                | DataType.XML
                | DataType.JSON
                | DataType.NAIVE_TIME
            ):
                return exp.DataType.build(
                    self.type_names[column.type], dialect=self.sqlglot_dialect
                )
            case _:
                assert_never(column.type)

    def type_text(self, column: Column) -> str:
        """The declared type as SQL text, for DDL and messages."""
        return self.sql(self.sql_type(column))

    def sql(self, expression: exp.Expr) -> str:
        """One expression as this dialect's SQL text (unsupported constructs raise)."""
        from sqlglot.errors import ErrorLevel

        return expression.sql(dialect=self.sqlglot_dialect, unsupported_level=ErrorLevel.RAISE)

    def stored_type(self, column: Column) -> DataType:
        return self.stored_as.get(column.type, column.type)

    def _storage(self, column: Column) -> str:
        """The stored type as SQL text (DECIMAL with its params). A STRING's declared length
        is not part of it: a changed ``string_byte_length`` is a metadata change (the column
        keeps the VARCHAR(n) it was created with, ``docs/dialects.md``)."""
        stored = self.stored_type(column)
        if stored is DataType.DECIMAL:
            return self.type_text(column)
        return self.type_names[stored]

    # --- planner.target.Target --------------------------------------------------------------

    def same_storage(self, source: Column, target: Column) -> bool:
        return self._storage(source) == self._storage(target)

    def widens_in_place(self, source: Column, target: Column) -> bool:
        if (self.stored_type(source), target.type) in self.widenings:
            return True
        if source.type is not DataType.DECIMAL or target.type is not DataType.DECIMAL:
            return False
        old, new = source.decimal_params, target.decimal_params
        more_digits, more_scale = new.precision - old.precision, new.scale - old.scale
        match self.decimal_widening:
            case None:
                return False
            case DecimalWidening.PRECISION:
                return more_scale == 0 and more_digits > 0
            case DecimalWidening.PRECISION_AND_SCALE:
                return more_digits >= more_scale >= 0 and more_digits > 0
            case _:
                assert_never(self.decimal_widening)

    def convertible(self, source: Column, target: Column) -> bool:
        if self.same_storage(source, target) or self.widens_in_place(source, target):
            return True
        return values.convertible(source, target)

    def conversion_can_fail(self, source: Column, target: Column) -> bool:
        probe = exp.column("value", quoted=True)
        return values.unconvertible(self, probe, source, target) is not None

    @property
    def lays_out_tables(self) -> bool:
        return self.layout is not None

    def key_type_allowed(self, data_type: DataType) -> bool:
        return data_type not in self.key_types_refused

    def needs_name_mapping(self, names: Iterable[str]) -> bool:
        """A column of one of ``names`` needs the table's ``name_mapping``."""
        return any(self.mapped_name_characters & set(name) for name in names)

    def name_problem(self, kind: NameKind, name: str) -> str | None:
        problem = self.names.problem(name)
        if problem is None and kind is not NameKind.CATALOG:
            problem = self.metastore_names.problem(name)
        return problem

    def for_catalog(self, catalog_type: CatalogType) -> Dialect:
        """This dialect on a catalog of ``catalog_type``: a Hive metastore refuses more names."""
        if catalog_type is not CatalogType.HIVE:
            return self
        key = (self.name, catalog_type)
        if (known := _ON_CATALOG.get(key)) is None:
            known = _ON_CATALOG.setdefault(
                key, dataclasses.replace(self, metastore_names=HIVE_METASTORE_NAMES)
            )
        return known

    def string_length_limit(self, column: Column) -> int | None:
        # Spark's VARCHAR(n) counts characters; a value of at most n bytes has at most n.
        if self.string_lengths and column.type is DataType.STRING:
            return column.string_byte_length
        return None


# ``Dialect.for_catalog``'s dialects, made once per dialect and catalog type.
_ON_CATALOG: dict[tuple[str, CatalogType], Dialect] = {}
