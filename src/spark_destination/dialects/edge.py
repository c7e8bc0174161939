"""The one ``to_sql`` edge: a statement skeleton with typed slots becomes SQL text, once.

A template (``dialects/skeletons``) lays out a statement as SQL a reviewer reads; its context
holds sqlglot trees, never text. Rendering writes a placeholder token for each slot value
(``__sd_slot_<n>``; the ``__sd_`` prefix is refused in every Fivetran name) and keeps the
trees aside (``Skeleton``). The skeleton text is parsed once per dialect and distinct text
(strictly, with the dialect's own reader) and kept: for a given template it depends only on
list lengths and flags, never on names, so every table of the same shape shares it. Each
statement copies that tree, puts each slot's tree where its placeholder parsed, and prints the
whole statement once, pretty, with unsupported constructs raising. No expression is printed to
text and parsed again.

Where a placeholder parses, and what its slot replaces:

- an identifier slot (``exp.Identifier``) replaces the placeholder identifier, wherever it
  stands (a column, an alias, a table, a column list);
- a table slot (``exp.Table``) gives the placeholder table its name parts, the last one where
  the placeholder parsed; the table's alias (``AS t``) stays the skeleton's;
- a type slot (``exp.DataType``) is written ``STRUCT<__sd_slot_<n>: INT>`` (a bare word is not
  a type in Spark's grammar) and replaces that whole type;
- any other slot replaces the node the placeholder parsed as: a column (a predicate, a select
  item), a bare word (a table property's key or value, ``USING``'s format) or an identifier
  (a column definition in a column list).

Statements outside sqlglot's grammar (Iceberg's ``CALL`` and ``SET IDENTIFIER FIELDS``,
``SHOW NAMESPACES``, Delta's ``OPTIMIZE`` / ``VACUUM`` / ``DESCRIBE DETAIL``) take the command
path: each slot is printed by itself for the dialect (identifiers by the one quoting helper's
rule) into the skeleton text. Only statements rendered as commands may take it.

The strict parse-back of the finished text (``parse_back``) is not on this path: the tests run
it on every golden and every form, and ``preview`` runs it on what it prints.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

import jinja2
import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError, TokenError

from spark_destination.core.errors import RenderError

SLOT_PREFIX: Final = "__sd_slot_"
# A type slot's placeholder: a type holding the placeholder as its one field's name.
_TYPE_PLACEHOLDER: Final = "STRUCT<{token}: INT>"
_TOKEN: Final = re.compile(r"STRUCT<(__sd_slot_\d+): INT>|(__sd_slot_\d+)")
# Distinct skeletons kept parsed: templates x list lengths x flags, across every table shape.
SKELETON_CACHE_SIZE: Final = 4096
# A table name's parts, outermost first, as ``exp.Table`` holds them.
_NAME_PARTS: Final = ("catalog", "db", "this")
# Jinja's name for the slot list inside a render.
_SLOTS: Final = "__sd_slots"


class _ExpectedCommandFilter(logging.Filter):
    """sqlglot warns when it parses table-format DDL as an opaque command; ``parse_back``
    decides whether that is allowed."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Falling back to parsing as a 'Command'" not in record.getMessage()


logging.getLogger("sqlglot").addFilter(_ExpectedCommandFilter())


@dataclass(frozen=True, slots=True)
class Skeleton:
    """A rendered template: SQL text with one placeholder per slot, and the slots' trees."""

    template: str
    text: str
    slots: tuple[exp.Expr, ...]


class _Placed(str):
    """Placeholders already written (a ``join``), which ``_finalize`` passes through."""

    __slots__ = ()


def _placeholder(value: object, slots: list[exp.Expr]) -> str:
    if not isinstance(value, exp.Expr):
        raise RenderError(
            f"a template slot must be a sqlglot tree, not {type(value).__name__}: {value!r}"
        )
    token = f"{SLOT_PREFIX}{len(slots)}"
    slots.append(value)
    if isinstance(value, exp.DataType):
        return _TYPE_PLACEHOLDER.format(token=token)
    return token


@jinja2.pass_context
def _finalize(context: jinja2.runtime.Context, value: object) -> object:
    """Every ``{{ … }}`` output: a tree becomes a placeholder; the template's own separators
    (``{{ "," if not loop.last }}``) stay as they are."""
    if isinstance(value, jinja2.Undefined | _Placed) or (
        isinstance(value, str) and value in ("", ",")
    ):
        return value
    slots: list[exp.Expr] = context[_SLOTS]
    return _placeholder(value, slots)


@jinja2.pass_context
def _join(context: jinja2.runtime.Context, values: Iterable[object], separator: str = "") -> str:
    """``{{ items | join(", ") }}``: one placeholder per item."""
    slots: list[exp.Expr] = context[_SLOTS]
    return _Placed(separator.join(_placeholder(value, slots) for value in values))


def environment(loader: jinja2.BaseLoader) -> jinja2.Environment:
    """The Jinja environment every dialect's skeletons render in."""
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # noqa: S701 - the output is a SQL skeleton, not HTML
        keep_trailing_newline=False,
        finalize=_finalize,
    )
    env.filters["join"] = _join
    return env


def render_skeleton(env: jinja2.Environment, name: str, values: dict[str, object]) -> Skeleton:
    """Template ``name`` rendered with ``values``: its skeleton text and slot trees."""
    slots: list[exp.Expr] = []
    text = env.get_template(name).render(**values, **{_SLOTS: slots})
    return Skeleton(template=name, text=text, slots=tuple(slots))


@functools.lru_cache(maxsize=SKELETON_CACHE_SIZE)
def _parsed(read: str, text: str) -> exp.Expr:
    """The skeleton's tree (never handed out: ``to_sql`` fills a copy)."""
    try:
        parsed = sqlglot.parse(text, read=read, error_level=ErrorLevel.RAISE)
    except ParseError as exc:
        raise RenderError(f"the statement skeleton does not parse: {exc}\n{text}") from exc
    if len(parsed) != 1 or parsed[0] is None:
        raise RenderError(f"a statement skeleton must be exactly one statement:\n{text}")
    tree = parsed[0]
    if isinstance(tree, exp.Command):
        raise RenderError(f"the statement skeleton is outside sqlglot's grammar:\n{text}")
    return tree


def _slot_number(node: exp.Expr) -> int | None:
    name = node.this if isinstance(node, exp.Identifier | exp.Var) else None
    if isinstance(name, str) and name.startswith(SLOT_PREFIX):
        return int(name[len(SLOT_PREFIX) :])
    return None


def _fill(tree: exp.Expr, slots: tuple[exp.Expr, ...]) -> None:
    placeholders = [
        (node, number)
        for node in tree.walk()
        if isinstance(node, exp.Identifier | exp.Var) and (number := _slot_number(node)) is not None
    ]
    if sorted(n for _, n in placeholders) != list(range(len(slots))):
        raise RenderError("a slot's placeholder did not parse as a name in its skeleton")
    for node, number in placeholders:
        slot = slots[number]
        # A tree already placed (the same value in two slots or two statements) is copied.
        if slot.parent is not None:
            slot = slot.copy()
        parent = node.parent
        if isinstance(slot, exp.Identifier):
            node.replace(slot)
        elif isinstance(slot, exp.Table):
            if not isinstance(parent, exp.Table) or node.arg_key not in _NAME_PARTS:
                raise RenderError("a table slot must stand where a table is named")
            # Right-aligned at the placeholder: a schema parses as a table's ``db`` in some
            # readers (Databricks' CREATE SCHEMA), so its two parts go to catalog and db there.
            parts = [p for p in (slot.args.get(k) for k in _NAME_PARTS) if p is not None]
            end = _NAME_PARTS.index(node.arg_key) + 1
            if len(parts) > end:
                raise RenderError("a table slot has more name parts than its place takes")
            for key in _NAME_PARTS:
                parent.set(key, None)
            for key, part in zip(_NAME_PARTS[end - len(parts) : end], parts, strict=True):
                parent.set(key, part)
        elif isinstance(slot, exp.DataType):
            holder = node.find_ancestor(exp.DataType)
            if holder is None:
                raise RenderError("a type slot must stand where a type is named")
            holder.replace(slot)
        elif isinstance(parent, exp.Column) and node.arg_key == "this" and not parent.table:
            parent.replace(slot)
        else:
            node.replace(slot)


def to_sql(read: str, skeleton: Skeleton, *, known_gap: bool = False) -> str:
    """The statement as text: the parsed skeleton with its slots filled, printed once.

    ``known_gap``: sqlglot parses the statement and prints it right but flags it as
    unsupported (sqlglot 30.30: ``ALTER COLUMN … SET NOT NULL``), so that check is off.
    """
    tree = _parsed(read, skeleton.text).copy()
    _fill(tree, skeleton.slots)
    # The tree is this call's own: printing it need not copy it first.
    return tree.sql(
        dialect=read,
        copy=False,
        pretty=True,
        unsupported_level=ErrorLevel.IGNORE if known_gap else ErrorLevel.RAISE,
        comments=False,
    )


def command_sql(read: str, skeleton: Skeleton) -> str:
    """A statement outside sqlglot's grammar: the skeleton text with each slot printed."""

    def printed(match: re.Match[str]) -> str:
        token = match[1] or match[2]
        slot = skeleton.slots[int(token[len(SLOT_PREFIX) :])]
        # Function names as built (``map(…)`` of Iceberg's CALL stays lower-case).
        return slot.sql(dialect=read, unsupported_level=ErrorLevel.RAISE, normalize_functions=False)

    return _TOKEN.sub(printed, skeleton.text).strip()


def parse_back(read: str, name: str, sql: str, *, command: bool, known_gap: bool) -> str:
    """``sql`` parsed back strictly with the dialect's reader and pretty-printed again: for the
    tests and ``preview``, which check that this changes nothing.

    A command (``command``) is returned as it is once its text tokenizes (every quoted name
    and literal closes) and sqlglot either reads it as an opaque command or cannot read it at
    all (Databricks' ``DESCRIBE DETAIL``); one that parses as a statement of the grammar should
    have been rendered through the tree path, and is refused.
    """
    if command:
        try:
            sqlglot.Dialect.get_or_raise(read).tokenize(sql)
        except TokenError as exc:
            raise RenderError(f"rendered command does not tokenize: {exc}\n{sql}") from exc
    try:
        parsed = sqlglot.parse(sql, read=read, error_level=ErrorLevel.RAISE)
    except ParseError as exc:
        if command:
            return sql.strip()
        raise RenderError(f"rendered SQL does not parse: {exc}\n{sql}") from exc
    if len(parsed) != 1 or parsed[0] is None:
        raise RenderError(f"rendered SQL must be exactly one statement:\n{sql}")
    tree = parsed[0]
    if isinstance(tree, exp.Command) != command:
        kind = "outside" if command else "inside"
        raise RenderError(f"rendered SQL is not {kind} sqlglot's {name} grammar:\n{sql}")
    if command:
        return sql.strip()
    return tree.sql(
        dialect=read,
        pretty=True,
        unsupported_level=ErrorLevel.IGNORE if known_gap else ErrorLevel.RAISE,
        comments=False,
    )
