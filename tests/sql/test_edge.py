"""The one ``to_sql`` edge: skeletons with typed slots, parsed once, filled, printed once."""

from __future__ import annotations

import jinja2
import pytest
import sqlglot
from sqlglot import exp

from spark_destination.core.errors import RenderError
from spark_destination.dialects import edge
from spark_destination.dialects.quoting import identifier, literal, table


def _skeleton(source: str, **values: object) -> edge.Skeleton:
    env = edge.environment(jinja2.DictLoader({"t": source}))
    return edge.render_skeleton(env, "t", dict(values))


def test_a_slot_must_be_a_tree_never_text() -> None:
    with pytest.raises(RenderError, match="must be a sqlglot tree, not str"):
        _skeleton("SELECT 1 FROM {{ t }}", t="`lake`.`s`.`t`")
    with pytest.raises(RenderError, match="must be a sqlglot tree, not str"):
        _skeleton("SELECT {{ cols | join(', ') }}", cols=[identifier("a"), "b"])


def test_each_slot_kind_lands_where_its_placeholder_parsed() -> None:
    """A table keeps the skeleton's alias; an identifier stays an identifier inside a column;
    an expression replaces the column its placeholder parsed as; a type replaces the type."""
    skeleton = _skeleton(
        "SELECT {{ cols | join(', ') }}, CAST({{ value }} AS {{ type }}) "
        "FROM {{ t }} AS {{ alias }} WHERE {{ where }}",
        cols=[identifier("a b"), identifier("c`d")],
        value=literal("1"),
        type=exp.DataType.build("DECIMAL(10, 2)"),
        t=table("lake", "my schema", "t"),
        alias=identifier("x"),
        where=exp.EQ(this=exp.column("a b", quoted=True), expression=literal("v")),
    )
    assert "__sd_slot_" in skeleton.text and len(skeleton.slots) == 7
    sql = edge.to_sql("spark", skeleton)
    expected = (
        "SELECT `a b`, `c``d`, CAST('1' AS DECIMAL(10, 2)) FROM `lake`.`my schema`.`t` AS `x` "
        "WHERE `a b` = 'v'"
    )
    assert sqlglot.parse_one(sql, read="spark") == sqlglot.parse_one(expected, read="spark")


def test_the_same_tree_in_two_slots_is_placed_twice() -> None:
    name = table("lake", "s", "t")
    sql = edge.to_sql(
        "spark", _skeleton("INSERT OVERWRITE TABLE {{ t }} SELECT * FROM {{ t }}", t=name)
    )
    assert sql.count("`lake`.`s`.`t`") == 2


def test_a_command_prints_each_slot_by_itself() -> None:
    skeleton = _skeleton("SHOW NAMESPACES IN {{ catalog }}", catalog=identifier("la`ke"))
    assert edge.command_sql("spark", skeleton) == "SHOW NAMESPACES IN `la``ke`"
    with pytest.raises(RenderError, match="outside sqlglot's grammar"):
        edge.to_sql("spark", skeleton)


def test_parse_back_refuses_what_does_not_print_back() -> None:
    assert edge.parse_back("spark", "spark_iceberg", "SELECT 1", command=False, known_gap=False)
    with pytest.raises(RenderError, match="does not parse"):
        edge.parse_back("spark", "spark_iceberg", "SELECT (", command=False, known_gap=False)
    with pytest.raises(RenderError, match="not inside"):
        edge.parse_back("spark", "spark_iceberg", "SHOW NAMESPACES", command=False, known_gap=False)
    with pytest.raises(RenderError, match="does not tokenize"):
        edge.parse_back("databricks", "x", "DESCRIBE DETAIL `a", command=True, known_gap=False)
