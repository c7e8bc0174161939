"""Wire contract of the project's Fivetran SDK v2 protos.

The generated descriptors are checked against the protocol tables in
tests/data/fivetran_protocol_tables.md (a verbatim copy of the reference's §2-§4 tables):
a renumbered, retyped, renamed or regrouped field breaks wire compatibility with Fivetran,
and nothing else in the test suite would notice. The committed stubs must also be exactly
what scripts/generate_protos.py produces, so they cannot drift from the .proto sources.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
from google.protobuf import descriptor_pb2

from spark_destination.server.proto.fivetran_sdk.v2 import common_pb2, destination_sdk_pb2

REPO_ROOT = Path(__file__).resolve().parents[2]
TABLES_PATH = REPO_ROOT / "tests" / "data" / "fivetran_protocol_tables.md"
GENERATOR_PATH = REPO_ROOT / "scripts" / "generate_protos.py"
GENERATED_ROOT = REPO_ROOT / "src" / "spark_destination" / "server" / "proto"

PACKAGE = "fivetran_sdk.v2"
COMMON_PROTO = "fivetran_sdk/v2/common.proto"
DESTINATION_PROTO = "fivetran_sdk/v2/destination_sdk.proto"
TIMESTAMP = "google.protobuf.Timestamp"
SCALAR_TYPES = frozenset(
    {"bool", "string", "bytes", "int32", "int64", "uint32", "uint64", "float", "double"}
)

FieldProto = descriptor_pb2.FieldDescriptorProto
FileProto = descriptor_pb2.FileDescriptorProto
MessageProto = descriptor_pb2.DescriptorProto


# --------------------------------------------------------------------------- specs


@dataclass(frozen=True)
class FieldSpec:
    name: str
    number: int
    # Normalised, e.g. "repeated string", "map<string,bytes>", "enum fivetran_sdk.v2.DataType".
    type: str
    oneof: str | None
    optional: bool


@dataclass(frozen=True)
class MessageSpec:
    name: str
    proto_file: str
    fields: tuple[FieldSpec, ...]


@dataclass(frozen=True)
class EnumSpec:
    name: str
    proto_file: str
    values: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class RpcSpec:
    name: str
    request: str
    response: str


@dataclass(frozen=True)
class ProtocolSpec:
    messages: tuple[MessageSpec, ...]
    enums: tuple[EnumSpec, ...]
    rpcs: tuple[RpcSpec, ...]


# --------------------------------------------------------------------------- table parsing


def _clean(cell: str) -> str:
    """Drop the markdown emphasis and code marks the reference uses for highlighting."""
    return cell.replace("**", "").replace("`", "").strip()


def _split_row(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _is_separator(cells: list[str]) -> bool:
    return all(re.fullmatch(r":?-{3,}:?", cell) for cell in cells)


def _proto_file_of_heading(heading: str) -> str:
    if "destination_sdk.proto" in heading:
        return DESTINATION_PROTO
    if "common.proto" in heading:
        return COMMON_PROTO
    raise ValueError(f"cannot tell which proto file heading {heading!r} describes")


def normalise_type(raw: str) -> str:
    """Turn a table type cell into the form `describe_field` produces from a descriptor."""
    text = re.sub(r"\s+", " ", _clean(raw))
    if text.startswith("map<"):
        return text.replace(" ", "")
    if text.startswith("repeated "):
        return "repeated " + normalise_type(text.removeprefix("repeated "))
    if text.startswith("enum "):
        return "enum " + _qualify(text.removeprefix("enum "))
    if text in SCALAR_TYPES:
        return text
    return _qualify(text)


def _qualify(type_name: str) -> str:
    if type_name in ("Timestamp", TIMESTAMP):
        return TIMESTAMP
    if not re.fullmatch(r"[A-Za-z_][\w.]*", type_name):
        raise ValueError(f"unrecognised type {type_name!r}")
    return type_name if "." in type_name else f"{PACKAGE}.{type_name}"


def _split_list(cell: str) -> list[str]:
    """Split a cell that lists several fields at once (`a / b / c` or `a, b`)."""
    return [part.strip() for part in re.split(r"[/,]", _clean(cell))]


def _expand_types(cell: str, count: int) -> list[str]:
    repeated = re.fullmatch(r"(\S+) ×(\d+)", _clean(cell))
    if repeated:
        return [repeated[1]] * int(repeated[2])
    # map<k,v> holds a comma of its own, so only lists of several fields are split.
    return _split_list(cell) if count > 1 else [_clean(cell)]


def _packed_fields(cell: str) -> list[tuple[str, int, str]]:
    """Fields packed into one cell as `name=number type, ...` (the ValueType row)."""
    packed = re.findall(r"(\w+)=(\d+) ([\w.]+)", cell)
    return [(name, int(number), type_name) for name, number, type_name in packed]


def parse_field_row(
    field_cell: str, number_cell: str, type_cell: str, notes: str
) -> list[FieldSpec]:
    oneof_match = re.search(r"\boneof (\w+)", _clean(notes))
    oneof = oneof_match[1] if oneof_match else None
    optional = re.search(r"\boptional\b", _clean(notes)) is not None

    if "=" in field_cell and not _clean(number_cell):
        triples = _packed_fields(field_cell)
    else:
        names = _split_list(field_cell)
        numbers = [int(number) for number in _split_list(number_cell)]
        types = _expand_types(type_cell, len(names))
        if not len(names) == len(numbers) == len(types):
            raise ValueError(f"row lists {names} with numbers {numbers} and types {types}")
        triples = list(zip(names, numbers, types, strict=True))
    if not triples:
        raise ValueError(f"no field in row {field_cell!r}")
    return [
        FieldSpec(name, number, normalise_type(type_name), oneof, optional)
        for name, number, type_name in triples
    ]


def _message_name(cell: str) -> str:
    # Cells such as "ValueType (source side only)" carry a remark after the name.
    match = re.match(r"\w+", _clean(cell))
    if match is None:
        raise ValueError(f"no message name in {cell!r}")
    return match[0]


def _parse_message_rows(rows: list[list[str]], proto_file: str) -> Iterator[MessageSpec]:
    name: str | None = None
    fields: list[FieldSpec] = []
    for message_cell, field_cell, number_cell, type_cell, notes in rows:
        if message_cell:
            if name is not None:
                yield MessageSpec(name, proto_file, tuple(fields))
            name, fields = _message_name(message_cell), []
        if name is None:
            raise ValueError("continuation row before any message")
        if _clean(field_cell) != "—":  # "—" marks an empty message
            fields.extend(parse_field_row(field_cell, number_cell, type_cell, notes))
    if name is not None:
        yield MessageSpec(name, proto_file, tuple(fields))


def _parse_enum_row(cells: list[str], proto_file: str) -> EnumSpec:
    name_cell, values_cell = cells
    values = tuple(
        (value, int(number)) for value, number in re.findall(r"`(\w+) = (\d+)`", values_cell)
    )
    if not values:
        raise ValueError(f"no values for enum {name_cell!r}")
    return EnumSpec(_clean(name_cell), proto_file, values)


def _parse_rpc_row(cells: list[str]) -> RpcSpec:
    _, rpc, request, response = (_message_name(cell) for cell in cells)
    return RpcSpec(rpc, request, response)


def _tables(text: str) -> Iterator[tuple[str, list[str], list[list[str]]]]:
    """Yield (heading, header cells, body rows) for every markdown table."""
    heading = ""
    table: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("#"):
            heading = line
        if line.startswith("|"):
            table.append(_split_row(line))
            continue
        if table:
            header, body = table[0], [row for row in table[1:] if not _is_separator(row)]
            yield heading, header, body
            table = []


def parse_protocol_tables(text: str) -> ProtocolSpec:
    messages: list[MessageSpec] = []
    enums: list[EnumSpec] = []
    rpcs: list[RpcSpec] = []
    for heading, header, body in _tables(text):
        kind = header[0]
        if kind == "Message":
            messages.extend(_parse_message_rows(body, _proto_file_of_heading(heading)))
        elif kind == "Enum":
            enums.extend(_parse_enum_row(row, _proto_file_of_heading(heading)) for row in body)
        elif kind == "#":
            rpcs.extend(_parse_rpc_row(row) for row in body)
        else:
            raise ValueError(f"unknown table with header {header}")
    return ProtocolSpec(tuple(messages), tuple(enums), tuple(rpcs))


# --------------------------------------------------------------------------- descriptors


def file_proto(module: ModuleType) -> FileProto:
    """The FileDescriptorProto exactly as embedded in the generated module."""
    return FileProto.FromString(module.DESCRIPTOR.serialized_pb)


def message_index(files: list[FileProto]) -> dict[str, MessageProto]:
    """Every message, nested ones (map entries) included, by fully qualified name."""
    index: dict[str, MessageProto] = {}

    def add(prefix: str, message: MessageProto) -> None:
        full_name = f"{prefix}.{message.name}"
        index[full_name] = message
        for nested in message.nested_type:
            add(full_name, nested)

    for proto in files:
        for message in proto.message_type:
            add(proto.package, message)
    return index


def _base_type(field: FieldProto) -> str:
    if field.type == FieldProto.TYPE_MESSAGE:
        return field.type_name.lstrip(".")
    if field.type == FieldProto.TYPE_ENUM:
        return "enum " + field.type_name.lstrip(".")
    return FieldProto.Type.Name(field.type).removeprefix("TYPE_").lower()


def describe_field(field: FieldProto, index: dict[str, MessageProto]) -> str:
    """Render a field's type in the table's notation."""
    if field.label != FieldProto.LABEL_REPEATED:
        return _base_type(field)
    entry = (
        index.get(field.type_name.lstrip(".")) if field.type == FieldProto.TYPE_MESSAGE else None
    )
    if entry is not None and entry.options.map_entry:
        key, value = (_base_type(part) for part in entry.field)
        return f"map<{key},{value}>"
    return "repeated " + _base_type(field)


def _real_oneof(field: FieldProto, message: MessageProto) -> str | None:
    # proto3 `optional` is encoded as a synthetic oneof, which is not a oneof of the table.
    if not field.HasField("oneof_index") or field.proto3_optional:
        return None
    return message.oneof_decl[field.oneof_index].name


def _top_level_message(proto: FileProto, name: str) -> MessageProto | None:
    return next((message for message in proto.message_type if message.name == name), None)


def message_problems(
    spec: MessageSpec, proto: FileProto, index: dict[str, MessageProto]
) -> list[str]:
    """Every difference between one table message and its descriptor; empty if they match."""
    message = _top_level_message(proto, spec.name)
    if message is None:
        return [f"{spec.name}: missing from {proto.name}"]
    actual = {field.name: field for field in message.field}
    expected = {field.name: field for field in spec.fields}
    problems = [
        f"{spec.name}.{name}: not in the tables" for name in sorted(actual.keys() - expected.keys())
    ]
    for name, field_spec in expected.items():
        field = actual.get(name)
        if field is None:
            problems.append(f"{spec.name}.{name}: missing")
            continue
        observed = FieldSpec(
            name=field.name,
            number=field.number,
            type=describe_field(field, index),
            oneof=_real_oneof(field, message),
            optional=field.proto3_optional,
        )
        if observed != field_spec:
            problems.append(f"{spec.name}.{name}: expected {field_spec}, found {observed}")
    return problems


def enum_problems(spec: EnumSpec, proto: FileProto) -> list[str]:
    enum = next((enum for enum in proto.enum_type if enum.name == spec.name), None)
    if enum is None:
        return [f"{spec.name}: missing from {proto.name}"]
    actual = tuple((value.name, value.number) for value in enum.value)
    return [] if actual == spec.values else [f"{spec.name}: expected {spec.values}, found {actual}"]


# --------------------------------------------------------------------------- fixtures

SPEC = parse_protocol_tables(TABLES_PATH.read_text(encoding="utf-8"))
FILES = {COMMON_PROTO: file_proto(common_pb2), DESTINATION_PROTO: file_proto(destination_sdk_pb2)}
INDEX = message_index(list(FILES.values()))


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_protos", GENERATOR_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _message_spec(name: str) -> MessageSpec:
    return next(message for message in SPEC.messages if message.name == name)


def _enum_spec(name: str) -> EnumSpec:
    return next(enum for enum in SPEC.enums if enum.name == name)


def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


# --------------------------------------------------------------------------- tests


def test_tables_parse_to_the_expected_shape() -> None:
    # Guards the parser itself: a silently skipped row would weaken every other check.
    assert len(SPEC.rpcs) == 10
    value_type = _message_spec("ValueType")
    assert [field.number for field in value_type.fields] == list(range(1, 17))
    assert {field.oneof for field in value_type.fields} == {"inner"}
    alter_response = _message_spec("AlterTableResponse")
    assert [(field.name, field.number) for field in alter_response.fields] == [
        ("success", 1),
        ("warning", 2),
        ("task", 3),
    ]


@pytest.mark.parametrize("spec", SPEC.messages, ids=lambda spec: spec.name)
def test_message_matches_tables(spec: MessageSpec) -> None:
    assert message_problems(spec, FILES[spec.proto_file], INDEX) == []


@pytest.mark.parametrize("spec", SPEC.enums, ids=lambda spec: spec.name)
def test_enum_matches_tables(spec: EnumSpec) -> None:
    assert enum_problems(spec, FILES[spec.proto_file]) == []


@pytest.mark.parametrize("proto_file", sorted(FILES))
def test_file_declares_exactly_the_tabled_types(proto_file: str) -> None:
    proto = FILES[proto_file]
    assert proto.package == PACKAGE
    assert proto.syntax == "proto3"
    assert proto.options.go_package == "fivetran.com/fivetran_sdk_v2"
    assert proto.options.java_multiple_files
    assert sorted(message.name for message in proto.message_type) == sorted(
        spec.name for spec in SPEC.messages if spec.proto_file == proto_file
    )
    assert sorted(enum.name for enum in proto.enum_type) == sorted(
        spec.name for spec in SPEC.enums if spec.proto_file == proto_file
    )


def test_destination_imports() -> None:
    assert list(FILES[DESTINATION_PROTO].dependency) == [
        "google/protobuf/timestamp.proto",
        COMMON_PROTO,
    ]


def test_service_has_exactly_the_tabled_unary_rpcs() -> None:
    assert not FILES[COMMON_PROTO].service
    (service,) = FILES[DESTINATION_PROTO].service
    assert service.name == "DestinationConnector"
    actual = {
        method.name: (
            method.input_type,
            method.output_type,
            method.client_streaming,
            method.server_streaming,
        )
        for method in service.method
    }
    expected = {
        rpc.name: (f".{PACKAGE}.{rpc.request}", f".{PACKAGE}.{rpc.response}", False, False)
        for rpc in SPEC.rpcs
    }
    assert actual == expected


def test_generated_grpc_module_uses_the_v2_service_path() -> None:
    from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2_grpc

    source = Path(destination_sdk_pb2_grpc.__file__).read_text(encoding="utf-8")
    for rpc in SPEC.rpcs:
        assert f"'/{PACKAGE}.DestinationConnector/{rpc.name}'" in source


def test_checker_detects_a_renumbered_field() -> None:
    # A checker that passes everything would make the contract tests worthless.
    mutated = FileProto()
    mutated.CopyFrom(FILES[DESTINATION_PROTO])
    request = _top_level_message(mutated, "WriteHistoryBatchRequest")
    assert request is not None
    next(field for field in request.field if field.name == "earliest_start_files").number = 10
    spec = _message_spec("WriteHistoryBatchRequest")
    problems = message_problems(spec, mutated, message_index([FILES[COMMON_PROTO], mutated]))
    assert len(problems) == 1 and "earliest_start_files" in problems[0]


def test_checker_detects_a_lost_optional_and_a_renumbered_enum_value() -> None:
    mutated = FileProto()
    mutated.CopyFrom(FILES[DESTINATION_PROTO])
    truncate = _top_level_message(mutated, "TruncateRequest")
    assert truncate is not None
    next(field for field in truncate.field if field.name == "soft").proto3_optional = False
    next(enum for enum in mutated.enum_type if enum.name == "Compression").value[2].number = 3
    truncate_spec = _message_spec("TruncateRequest")
    compression_spec = _enum_spec("Compression")
    assert message_problems(truncate_spec, mutated, message_index([FILES[COMMON_PROTO], mutated]))
    assert enum_problems(compression_spec, mutated)


def test_committed_stubs_are_reproducible(tmp_path: Path) -> None:
    _load_generator().generate(tmp_path)
    committed, regenerated = _tree_bytes(GENERATED_ROOT), _tree_bytes(tmp_path)
    assert sorted(committed) == sorted(regenerated)
    stale = [name for name in committed if committed[name] != regenerated[name]]
    assert stale == [], "run `python scripts/generate_protos.py` and commit the result"
