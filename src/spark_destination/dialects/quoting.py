"""The one place identifiers and literals become SQL text.

Every identifier is quoted unconditionally (backticks, embedded backticks doubled by sqlglot),
so names with spaces, dots, hyphens, backticks or reserved words are always safe and the output
is deterministic. Literals go through sqlglot too; data values never become SQL text.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlglot import exp

SQLGLOT_DIALECT = "spark"


def ident(name: str) -> str:
    """A quoted identifier: ``a`b`` -> ```a``b````."""
    if not name:
        raise ValueError("an identifier cannot be empty")
    return exp.to_identifier(name, quoted=True).sql(dialect=SQLGLOT_DIALECT)


def qualified(*parts: str) -> str:
    """A dotted, fully quoted name such as ```lake`.`schema`.`table```."""
    return ".".join(ident(p) for p in parts)


def string_literal(value: str) -> str:
    return exp.Literal.string(value).sql(dialect=SQLGLOT_DIALECT)


def utc_timestamp_text(value: datetime) -> str:
    """``value`` in UTC with microsecond precision (what Spark and Delta store), as the text of
    a timestamp literal; a naive value is taken as UTC."""
    utc = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    return utc.strftime("%Y-%m-%d %H:%M:%S.%f")
