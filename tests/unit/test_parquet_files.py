"""Parquet batch files (runtime.batch.parquet_files) written the way AvroParquetWriter does
(replay.batch_writer), decoded to the same typed table as the CSV of the same rows."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from spark_destination.core.config import BatchFileFormat
from spark_destination.core.errors import BatchFileError, InvalidRequestError, ValueConversionError
from spark_destination.core.model import (
    Column,
    Compression,
    DataType,
    DecimalParams,
    Encryption,
    FileKind,
    FileParams,
)
from spark_destination.planner.ir import unmodified_column
from spark_destination.replay.batch_writer import (
    new_key,
    parquet_table,
    write_batch_file,
    write_parquet_batch_file,
    write_parquet_table,
)
from spark_destination.runtime.batch.decoders import decode_parquet_file, decoder_for
from spark_destination.runtime.batch.parquet_files import read_parquet_batch_file
from spark_destination.runtime.batch.typed_csv import decode_csv_file
from spark_destination.runtime.batch.typed_decode import DecodeSpec, decode_file

NULL = "null-m8yilkvPsNulehxl2G6pmSQ3G3WWdLP"
UNMOD = "unmod-NcK9NIjPUutCsz4mjOQQztbnwnE1sY3"
PROD = FileParams(null_string=NULL, unmodified_string=UNMOD)
SECRET = "SECRET-value-7"

COLUMNS = (
    Column(name="id", type=DataType.LONG, primary_key=True),
    Column(name="flag", type=DataType.BOOLEAN),
    Column(name="small", type=DataType.SHORT),
    Column(name="count", type=DataType.INT),
    Column(name="amount", type=DataType.DECIMAL, decimal=DecimalParams(precision=18, scale=4)),
    Column(name="ratio", type=DataType.FLOAT),
    Column(name="score", type=DataType.DOUBLE),
    Column(name="day", type=DataType.NAIVE_DATE),
    Column(name="local", type=DataType.NAIVE_DATETIME),
    Column(name="at", type=DataType.UTC_DATETIME),
    Column(name="payload", type=DataType.BINARY),
    Column(name="doc", type=DataType.XML),
    Column(name="name", type=DataType.STRING),
    Column(name="attrs", type=DataType.JSON),
    Column(name="clock", type=DataType.NAIVE_TIME),
)
HEADER = [c.name for c in COLUMNS]
ROWS = [
    ["1", "true", "-3", "7", "12.5", "1.5", "-2.25", "2024-02-29", "2024-02-29T10:15:30",
     "2025-11-21T14:59:47.315Z", "aGVsbG8=", "<a/>", SECRET, '{"a": 1}', "10:15:30"],
    ["2", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL],
    ["3", "FALSE", "32767", "-2147483648", "1E+3", "Infinity", "1e300", "0001-01-01",
     "9999-12-31T23:59:59.999999", "9999-12-31T23:59:59.999Z", "[B@7d4991ad", "", "", "[]",
     "23:59"],
]  # fmt: skip
SPEC = DecodeSpec(columns=COLUMNS, key=("id",), null_string=NULL, unmodified_string=UNMOD)


def typed(path: Path, params: FileParams, key: bytes | None, *, parquet: bool) -> pa.Table:
    decoder = decoder_for(BatchFileFormat.PARQUET if parquet else BatchFileFormat.CSV)
    return decoder(str(path), key=key, params=params, spec=SPEC, kind=FileKind.UPDATE)


@pytest.mark.parametrize("compression", list(Compression))
@pytest.mark.parametrize("encryption", list(Encryption))
def test_parquet_decodes_to_the_same_typed_table_as_csv(
    tmp_path: Path, compression: Compression, encryption: Encryption
) -> None:
    params = FileParams(
        compression=compression, encryption=encryption, null_string=NULL, unmodified_string=UNMOD
    )
    key = new_key() if encryption is Encryption.AES else None
    write_batch_file(tmp_path / "b.csv", HEADER, ROWS, params=params, key=key)
    write_parquet_batch_file(tmp_path / "b.parquet", COLUMNS, HEADER, ROWS, params=params, key=key)
    from_csv = typed(tmp_path / "b.csv", params, key, parquet=False)
    from_parquet = typed(tmp_path / "b.parquet", params, key, parquet=True)
    assert from_parquet.equals(from_csv)
    assert from_parquet.column("payload").to_pylist()[2] == b"[B@7d4991ad"


def test_the_writer_follows_avro_conventions() -> None:
    table = parquet_table(COLUMNS, HEADER, ROWS, params=PROD)
    types = {f.name: f.type for f in table.schema}
    assert types["flag"] == pa.bool_() and types["small"] == pa.int32()
    assert types["id"] == pa.int64() and types["amount"] == pa.decimal128(18, 4)
    assert types["ratio"] == pa.float32() and types["payload"] == pa.binary()
    # Instants, dates and text are strings; a typed column's NULL is a real NULL.
    assert types["at"] == pa.string() and types["day"] == pa.string()
    assert table.column("count").to_pylist()[1] is None
    assert table.column("name").to_pylist()[1] == NULL


def test_unmodified_values_travel_in_a_string_column_and_become_a_mask(tmp_path: Path) -> None:
    rows = [["1", UNMOD, "5"], ["2", "7", UNMOD]]
    columns = (COLUMNS[0], COLUMNS[3], Column(name="name", type=DataType.STRING))
    header = ["id", "count", "name"]
    path = tmp_path / "u.parquet"
    key = new_key()
    write_parquet_batch_file(path, columns, header, rows, params=PROD, key=key)
    raw = read_parquet_batch_file(str(path), key=key, params=PROD, columns=header)
    assert raw.schema.field("count").type == pa.string()
    spec = DecodeSpec(columns=columns, key=("id",), null_string=NULL, unmodified_string=UNMOD)
    table = decode_file(raw, spec=spec, kind=FileKind.UPDATE, path=str(path))
    assert table.column("count").to_pylist() == [None, 7]
    assert table.column(unmodified_column("count")).to_pylist() == [True, False]
    assert table.column(unmodified_column("name")).to_pylist() == [False, True]


def test_parquet_compressed_outside_the_file_is_read_too(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64())}), buffer)
    path = tmp_path / "z.parquet"
    path.write_bytes(zstandard.ZstdCompressor().compress(buffer.getvalue()))
    params = FileParams(compression=Compression.ZSTD, encryption=Encryption.NONE)
    raw = read_parquet_batch_file(str(path), key=None, params=params, columns=["id"])
    assert raw.column("id").to_pylist() == [1, 2]


def _write(tmp_path: Path, table: pa.Table) -> tuple[str, bytes]:
    path = tmp_path / "f.parquet"
    key = new_key()
    write_parquet_table(path, table, params=PROD, key=key, rng=random.Random(1))
    return str(path), key


def test_corrupt_footer_is_a_clear_error(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    pq.write_table(pa.table({"id": [1], "name": [SECRET]}), buffer)
    data = bytearray(buffer.getvalue())
    data[-12:-4] = b"\xff" * 8  # the footer length and the end of the footer
    path = tmp_path / "bad.parquet"
    path.write_bytes(bytes(data))
    params = FileParams(compression=Compression.OFF, encryption=Encryption.NONE)
    with pytest.raises(BatchFileError, match="bad.parquet' is not a valid Parquet file") as info:
        read_parquet_batch_file(str(path), key=None, params=params, columns=["id", "name"])
    assert SECRET not in str(info.value)


@pytest.mark.parametrize("compression", list(Compression))
@pytest.mark.parametrize("encryption", list(Encryption))
def test_a_file_in_the_other_format_names_what_capabilities_announced(
    tmp_path: Path, compression: Compression, encryption: Encryption
) -> None:
    """Fivetran writes the format Capabilities announced; a file in the other one is a task
    that says which format the destination expects (never a parser's message on its bytes)."""
    params = FileParams(
        compression=compression, encryption=encryption, null_string=NULL, unmodified_string=UNMOD
    )
    key = new_key() if encryption is Encryption.AES else None
    write_batch_file(tmp_path / "b.csv", HEADER, ROWS, params=params, key=key)
    write_parquet_batch_file(tmp_path / "b.parquet", COLUMNS, HEADER, ROWS, params=params, key=key)
    with pytest.raises(BatchFileError, match="b.csv' is not a Parquet file.*announced Parquet"):
        typed(tmp_path / "b.csv", params, key, parquet=True)
    with pytest.raises(BatchFileError, match="b.parquet' is a Parquet file.*announced CSV") as info:
        typed(tmp_path / "b.parquet", params, key, parquet=False)
    assert SECRET not in str(info.value)


def test_wrong_key_is_a_clear_error(tmp_path: Path) -> None:
    path, _key = _write(tmp_path, pa.table({"id": pa.array([1], pa.int64())}))
    with pytest.raises(BatchFileError, match="wrong key"):
        read_parquet_batch_file(path, key=new_key(), params=PROD, columns=["id"])


def test_a_column_of_the_wrong_type_is_a_clear_error(tmp_path: Path) -> None:
    path, key = _write(tmp_path, pa.table({"id": pa.array([1], pa.int64()), "flag": [3.5]}))
    raw = read_parquet_batch_file(path, key=key, params=PROD, columns=HEADER)
    with pytest.raises(BatchFileError, match="column 'flag' as double.*BOOLEAN"):
        decode_file(raw, spec=SPEC, kind=FileKind.REPLACE, path=path)


def test_a_typed_value_out_of_range_names_its_row(tmp_path: Path) -> None:
    table = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "small": pa.array([1, 2, 40000])})
    path, key = _write(tmp_path, table)
    raw = read_parquet_batch_file(path, key=key, params=PROD, columns=HEADER)
    with pytest.raises(ValueConversionError, match="'small' .*data row 3: expected a value of"):
        decode_file(raw, spec=SPEC, kind=FileKind.REPLACE, path=path)


def test_a_missing_or_null_key_column_is_a_clear_error(tmp_path: Path) -> None:
    path, key = _write(tmp_path, pa.table({"name": ["x"]}))
    raw = read_parquet_batch_file(path, key=key, params=PROD, columns=HEADER)
    # A file without the key column is refused as a file, before any row is looked at.
    with pytest.raises(BatchFileError, match="lacks primary key column.*'id'"):
        decode_file(raw, spec=SPEC, kind=FileKind.REPLACE, path=path)
    path, key = _write(tmp_path, pa.table({"id": pa.array([1, None], pa.int64())}))
    raw = read_parquet_batch_file(path, key=key, params=PROD, columns=HEADER)
    with pytest.raises(ValueConversionError, match="'id' .*data row 2: expected a non-NULL key"):
        decode_file(raw, spec=SPEC, kind=FileKind.REPLACE, path=path)


def test_a_column_unknown_to_the_table_is_refused(tmp_path: Path) -> None:
    path, key = _write(tmp_path, pa.table({"id": pa.array([1], pa.int64()), "surprise": [1]}))
    with pytest.raises(InvalidRequestError, match="'surprise'"):
        read_parquet_batch_file(path, key=key, params=PROD, columns=HEADER)


def test_each_format_decodes_through_its_own_decoder() -> None:
    assert decoder_for(BatchFileFormat.CSV) is decode_csv_file
    assert decoder_for(BatchFileFormat.PARQUET) is decode_parquet_file


@pytest.mark.parametrize(("default", "announced"), [(None, "CSV"), ("parquet", "PARQUET")])
def test_capabilities_announce_the_configured_format(default: str | None, announced: str) -> None:
    from spark_destination.engine.engine import Engine, SessionProvider
    from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb
    from spark_destination.server.servicer import DestinationServicer

    def unused(*_args: object) -> None:
        raise AssertionError("Capabilities must not start Spark")

    sessions = SessionProvider(build=unused, check=unused, register_catalog=unused)  # type: ignore[arg-type]
    defaults = {"batch_file_format": default} if default else {}
    servicer = DestinationServicer(Engine(sessions, defaults=defaults))
    response = servicer.Capabilities(pb.CapabilitiesRequest(), None)  # type: ignore[arg-type]
    assert response.batch_file_format == pb.BatchFileFormat.Value(announced)


def test_the_batch_file_format_is_the_servers_and_not_in_the_form() -> None:
    """Capabilities carry no configuration: a form value could only disagree with the files
    Fivetran sends after reading Capabilities. The reader takes the server's value whatever a
    request's configuration says."""
    from spark_destination.engine.engine import Engine, SessionProvider
    from spark_destination.server import form

    assert "batch_file_format" not in {f.name for f in form.every_field(form.configuration_form())}

    def unused(*_args: object) -> None:
        raise AssertionError("config must not start Spark")

    sessions = SessionProvider(build=unused, check=unused, register_catalog=unused)  # type: ignore[arg-type]
    for server, asked in (("csv", "parquet"), ("parquet", "csv")):
        engine = Engine(sessions, defaults={"batch_file_format": server})
        assert engine.config({"batch_file_format": asked}).batch_file_format == server


def test_an_unknown_batch_file_format_is_refused() -> None:
    from spark_destination.core.config import parse_config
    from spark_destination.core.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="batch_file_format"):
        parse_config({"batch_file_format": "avro"})
    assert parse_config({"batch_file_format": "PARQUET"}).batch_file_format == "parquet"
