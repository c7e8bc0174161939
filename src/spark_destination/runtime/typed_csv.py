"""CSV batch files parsed straight into typed columns: the fast path of typed staging.

``read_batch_file`` + ``typed_decode.decode_file`` (the precise path) parse every value as text,
then cast it. Here pyarrow's CSV reader converts a column itself while parsing, where its
converter accepts exactly the text the precise path accepts and gives the same value:

* BOOLEAN: every letter case of ``true`` / ``false`` (listed), nothing else, no trimming;
* NAIVE_DATETIME / UTC_DATETIME: the ISO-8601 parser ``pc.cast`` uses, no trimming (text it
  refuses, e.g. nine fractional digits or an instant without a zone, sends the file down the
  precise path, which normalises such text);
* text columns: as is; the null sentinel becomes NULL in the parser either way.

pyarrow's number and date converters also accept surrounding spaces and tabs, which the precise
path refuses, so those columns stay text here and are cast by ``decode_file`` (as are BINARY and
NAIVE_TIME). A column that may hold the unmodified sentinel (non-key columns of update files)
stays text too, as does any column whose type could read a sentinel as a value.

Any problem at all in the fast attempt (a value that does not convert, a CSV or decoding error)
discards it and runs the precise path, which returns the same table or raises the same error
(file, data row, column, type; never a value) as before. The fast attempt's own errors are
never shown. Runtime layer: no pyspark here.
"""

from __future__ import annotations

import itertools
from typing import Final

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from spark_destination.errors import BatchFileError, ValueConversionError
from spark_destination.model import Column, DataType, FileKind, FileParams
from spark_destination.runtime.batch_files import read_batch_file
from spark_destination.runtime.typed_decode import DecodeSpec, arrow_type, decode_file

__all__ = ["decode_csv_file", "parse_types"]

# Types whose pyarrow CSV conversion equals the precise path's (see the module docstring).
_PARSED_TYPED: Final = frozenset(
    {DataType.BOOLEAN, DataType.NAIVE_DATETIME, DataType.UTC_DATETIME}
)


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
        pc.cast(pa.array([text], pa.string()), arrow_type(column))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False
    return True


def parse_types(spec: DecodeSpec, kind: FileKind) -> dict[str, pa.DataType]:
    """The type pyarrow parses each column as: its staged type where that is exact, else text."""
    may_be_unmodified = set(spec.masked) if kind is FileKind.UPDATE else set()
    types: dict[str, pa.DataType] = {}
    for column in spec.columns:
        typed = (
            column.type in _PARSED_TYPED
            and column.name not in may_be_unmodified
            and not (
                spec.unmodified_string is not None
                and _reads_as_value(spec.unmodified_string, column)
            )
        )
        types[column.name] = arrow_type(column) if typed else pa.string()
    return types


def _convert_options(spec: DecodeSpec, kind: FileKind) -> pa_csv.ConvertOptions:
    return pa_csv.ConvertOptions(
        column_types=parse_types(spec, kind),
        null_values=[] if spec.null_string is None else [spec.null_string],
        strings_can_be_null=True,
        quoted_strings_can_be_null=True,
        true_values=list(TRUE_TEXTS),
        false_values=list(FALSE_TEXTS),
        check_utf8=True,
    )


def fast_path_applies(spec: DecodeSpec) -> bool:
    """False when the sentinels are one text: the parser could not tell NULL from unmodified."""
    return spec.null_string is None or spec.null_string != spec.unmodified_string


def decode_csv_file(
    path: str, *, key: bytes | None, params: FileParams, spec: DecodeSpec, kind: FileKind
) -> pa.Table:
    """The typed table (``spec.schema()``) of one CSV batch file; same result, or same error,
    as ``decode_file(read_batch_file(...))``, usually without parsing every value as text."""
    names = [c.name for c in spec.columns]
    if fast_path_applies(spec):
        try:
            raw = read_batch_file(
                path, key=key, params=params, columns=names, convert=_convert_options(spec, kind)
            )
            return decode_file(raw, spec=spec, kind=kind, path=path)
        except (BatchFileError, ValueConversionError):
            # The precise path finds and names the problem, or finds none (text the fast
            # converters refuse but the precise path accepts): its table is then the result.
            pass
    raw = read_batch_file(path, key=key, params=params, columns=names)
    return decode_file(raw, spec=spec, kind=kind, path=path)
