"""CSV batch files parsed straight into typed columns: the fast path of typed staging.

``read_batch_file`` + ``typed_decode.decode_file`` (the precise path) parse every value as text,
then cast it. Here pyarrow's CSV reader converts a column itself while parsing, where its
converter accepts exactly the text the precise path accepts and gives the same value:

* BOOLEAN: every letter case of ``true`` / ``false`` (listed), nothing else, no trimming;
* NAIVE_DATETIME / UTC_DATETIME: the ISO-8601 parser ``pc.cast`` uses, no trimming (text it
  refuses, e.g. nine fractional digits or an instant without a zone, sends the file down the
  precise path, which normalises such text);
* SHORT / INT / LONG / FLOAT / DOUBLE / NAIVE_DATE: the parsers ``pc.cast`` uses, except that
  pyarrow's CSV converters also skip spaces and tabs around a value, which the precise path
  refuses. Checked exactly: the spaces and tabs of the whole text are counted as it streams
  past; every one must be in the header, a text column's value or a null sentinel, or the
  file takes the precise path (so does a file with a timestamp written with a space for
  ``T``, which Fivetran does not write). A float that came out infinite does too (the
  precise path tells ``1e400``, refused, from ``Infinity``, accepted);
* DECIMAL(p, s) stays text: pyarrow's converter (the cast's parser) silently wraps a value whose
  digits overflow 128 bits once scaled and rounds tiny scientific values to 0, so
  ``decode_file`` converts and checks it (measured: parse as text, then cast and check, costs
  about what the typed parse did);
* text columns: as is; the null sentinel becomes NULL in the parser either way.

BINARY, DECIMAL and NAIVE_TIME stay text and are converted by ``decode_file``. A column that may
hold the unmodified sentinel (non-key columns of update files) stays text, as does any column
whose type could read a sentinel as a value.

Any problem at all in the fast attempt (a value that does not convert, a CSV or decoding error)
discards it and runs the precise path, which returns the same table or raises the same error
(file, data row, column, type; never a value) as before. With ``bad_value_policy=null`` a
value the converter of a lenient column refuses instead makes the next attempt parse that
column as text (``decode_file`` then NULLs and reports every bad value of it), so clean columns
keep being typed while parsing. The fast attempt's own errors are
never shown. Runtime layer: no pyspark here.
"""

from __future__ import annotations

import itertools
from typing import Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from spark_destination.core.errors import BatchFileError, ValueConversionError
from spark_destination.core.model import Column, DataType, FileKind, FileParams
from spark_destination.runtime.batch.csv_text import (
    UnconvertedColumn,
    first_block,
    first_record,
    read_batch_file,
)
from spark_destination.runtime.batch.typed_decode import DecodeSpec, arrow_type, decode_file
from spark_destination.runtime.batch.value_changes import ColumnChanges

__all__ = ["decode_csv_file", "parse_types"]

# Types whose pyarrow CSV conversion equals the precise path's (see the module docstring).
_PARSED_TYPED: Final = frozenset(
    {
        DataType.BOOLEAN,
        DataType.SHORT,
        DataType.INT,
        DataType.LONG,
        DataType.FLOAT,
        DataType.DOUBLE,
        DataType.NAIVE_DATE,
        DataType.NAIVE_DATETIME,
        DataType.UTC_DATETIME,
    }
)
_BLANKS: Final = (" ", "\t")
_SPACE: Final = ord(" ")
_TAB: Final = ord("\t")


def _letter_cases(word: str) -> list[str]:
    return ["".join(letters) for letters in itertools.product(*((c, c.upper()) for c in word))]


# The precise path lower-cases and compares; pyarrow compares exactly, so list every spelling.
TRUE_TEXTS: Final = tuple(_letter_cases("true"))
FALSE_TEXTS: Final = tuple(_letter_cases("false"))


def _reads_as_value(text: str, column: Column) -> bool:
    """Whether pyarrow's converter for ``column`` would take the sentinel ``text`` as a value."""
    if column.type is DataType.BOOLEAN:
        return text in TRUE_TEXTS or text in FALSE_TEXTS
    try:
        pc.cast(pa.array([text.strip(" \t")], pa.string()), arrow_type(column))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False
    return True


def parse_types(
    spec: DecodeSpec, kind: FileKind, as_text: frozenset[str] = frozenset()
) -> dict[str, pa.DataType]:
    """The type pyarrow parses each column as: its staged type where that is exact, else text
    (and text for the ``as_text`` columns)."""
    may_be_unmodified = set(spec.masked) if kind is FileKind.UPDATE else set()
    types: dict[str, pa.DataType] = {}
    for column in spec.columns:
        typed = (
            column.type in _PARSED_TYPED
            and column.name not in as_text
            and column.name not in may_be_unmodified
            and not (
                spec.unmodified_string is not None
                and _reads_as_value(spec.unmodified_string, column)
            )
        )
        types[column.name] = arrow_type(column) if typed else pa.string()
    return types


def _convert_options(
    spec: DecodeSpec, kind: FileKind, as_text: frozenset[str]
) -> pa_csv.ConvertOptions:
    return pa_csv.ConvertOptions(
        column_types=parse_types(spec, kind, as_text),
        null_values=[] if spec.null_string is None else [spec.null_string],
        strings_can_be_null=True,
        quoted_strings_can_be_null=True,
        true_values=list(TRUE_TEXTS),
        false_values=list(FALSE_TEXTS),
        check_utf8=True,
    )


def fast_path_applies(
    spec: DecodeSpec, kind: FileKind, as_text: frozenset[str] = frozenset()
) -> bool:
    """Whether the fast attempt can pay: some non-key column is parsed typed. Never when the
    sentinels are one text (the parser could not tell NULL from unmodified)."""
    if spec.null_string is not None and spec.null_string == spec.unmodified_string:
        return False
    types = parse_types(spec, kind, as_text)
    return any(types[c.name] != pa.string() for c in spec.columns if c.name not in spec.key)


def decode_csv_file(
    path: str,
    *,
    key: bytes | None,
    params: FileParams,
    spec: DecodeSpec,
    kind: FileKind,
    changes: list[ColumnChanges] | None = None,
) -> pa.Table:
    """The typed table (``spec.schema()``) of one CSV batch file; same result, or same error,
    as ``decode_file(read_batch_file(...))``, usually without parsing every value as text.

    With lenient columns (``bad_value_policy=null``) a column whose converter refuses a value
    is parsed as text in the next attempt, where ``decode_file`` finds every bad value of it
    in one pass; the other columns stay typed. At the first such refusal the file's first
    block is decoded as text to find every lenient column with a bad value in it at once;
    columns whose bad values come later cost one more short start each (an attempt stops at
    the first block holding such a value).
    """
    names = [c.name for c in spec.columns]
    as_text: frozenset[str] = frozenset()
    header: list[str] = []
    while fast_path_applies(spec, kind, as_text):
        blanks: list[int] = []
        try:
            raw = read_batch_file(
                path,
                key=key,
                params=params,
                columns=names,
                convert=_convert_options(spec, kind, as_text),
                blanks=blanks,
            )
        except UnconvertedColumn as unconverted:
            if not spec.lenient:
                break
            tried = as_text
            if not header:
                sample = first_block(path, key, params, names)
                header = sample.column_names if sample is not None else []
                header = header or first_record(path, key, params)
                as_text |= _bad_columns(sample, spec, kind, path)
            name = header[unconverted.index] if unconverted.index < len(header) else None
            if name is None or name not in spec.lenient or name in tried:
                break  # not a value bad_value_policy=null changes: the precise path says so
            as_text |= {name}
            continue
        except (BatchFileError, ValueConversionError):
            # The precise path finds and names the problem, or finds none (text the fast
            # converters refuse but the precise path accepts): its table is then the result.
            break
        if not _parsed_exactly(raw, blanks[-1], spec.null_string):
            break
        attempt: list[ColumnChanges] | None = None if changes is None else []
        try:
            typed = decode_file(raw, spec=spec, kind=kind, path=path, changes=attempt)
        except ValueConversionError:
            break
        if changes is not None and attempt:
            changes.extend(attempt)
        return typed
    raw = read_batch_file(path, key=key, params=params, columns=names)
    return decode_file(raw, spec=spec, kind=kind, path=path, changes=changes)


def _bad_columns(
    sample: pa.Table | None, spec: DecodeSpec, kind: FileKind, path: str
) -> frozenset[str]:
    """The lenient columns with a value that does not fit in ``sample`` (text rows of the
    file), found as the precise path finds them; none if the sample fails otherwise."""
    if sample is None:
        return frozenset()
    changes: list[ColumnChanges] = []
    try:
        decode_file(sample, spec=spec, kind=kind, path=path, changes=changes)
    except (BatchFileError, ValueConversionError):
        return frozenset()
    return frozenset(c.column for c in changes)


def _text_blanks(chunk: pa.StringArray) -> int:
    """Spaces and tabs in a text array's values: numpy over its bytes (``pc.count_substring``
    is several times slower). A NULL's slot holds no bytes in arrays pyarrow's CSV reader makes."""
    offsets_buffer, data_buffer = chunk.buffers()[1:3]
    if data_buffer is None or not len(chunk):
        return 0
    offsets = np.frombuffer(offsets_buffer, np.int32, count=len(chunk) + 1, offset=chunk.offset * 4)
    data = np.frombuffer(data_buffer, np.uint8)[offsets[0] : offsets[-1]]
    return int(np.count_nonzero(data == _SPACE)) + int(np.count_nonzero(data == _TAB))


def _blank_count(text: str) -> int:
    return sum(text.count(blank) for blank in _BLANKS)


def _parsed_exactly(raw: pa.Table, blanks: int, null_string: str | None) -> bool:
    """No space or tab was skipped around a parsed value, and no float came out infinite."""
    accounted = sum(_blank_count(name) for name in raw.column_names)
    null_blanks = _blank_count(null_string) if null_string is not None else 0
    for column in raw.columns:
        # Every NULL of a CSV file was the null sentinel, whose text was counted too.
        accounted += column.null_count * null_blanks
        if column.type == pa.string():
            accounted += sum(_text_blanks(chunk) for chunk in column.chunks)
        elif pa.types.is_floating(column.type) and pc.any(pc.is_inf(column)).as_py():
            return False
    return accounted == blanks
