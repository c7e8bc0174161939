"""The one place identifiers and literals are made.

Every identifier is quoted unconditionally (backticks, embedded backticks doubled when
printed), so names with spaces, dots, hyphens, backticks or reserved words are always safe and
the output is deterministic. Literals are sqlglot literals; data values never become SQL text.
The text forms (``ident``, ``qualified``) print the same trees, for messages and for SQL the
tester runs outside the engine.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlglot import exp

SQLGLOT_DIALECT = "spark"


def identifier(name: str) -> exp.Identifier:
    """A quoted identifier."""
    if not name:
        raise ValueError("an identifier cannot be empty")
    return exp.Identifier(this=name, quoted=True)


def table(*parts: str) -> exp.Table:
    """A table named by up to three quoted parts: ``[[catalog.]schema.]name``."""
    if not 1 <= len(parts) <= 3:
        raise ValueError(f"a table name has one to three parts, not {len(parts)}")
    name, *qualifiers = reversed(parts)
    db = identifier(qualifiers[0]) if qualifiers else None
    catalog = identifier(qualifiers[1]) if len(qualifiers) > 1 else None
    return exp.Table(this=identifier(name), db=db, catalog=catalog)


def literal(value: str) -> exp.Literal:
    return exp.Literal.string(value)


def ident(name: str) -> str:
    """A quoted identifier as text: ``a`b`` -> ```a``b````."""
    return identifier(name).sql(dialect=SQLGLOT_DIALECT)


def qualified(*parts: str) -> str:
    """A dotted, fully quoted name as text, such as ```lake`.`schema`.`table```."""
    return ".".join(ident(p) for p in parts)


def string_literal(value: str) -> str:
    return literal(value).sql(dialect=SQLGLOT_DIALECT)


def utc_timestamp_text(value: datetime) -> str:
    """``value`` in UTC with microsecond precision (what Spark and Delta store), as the text of
    a timestamp literal; a naive value is taken as UTC."""
    utc = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    return utc.strftime("%Y-%m-%d %H:%M:%S.%f")
