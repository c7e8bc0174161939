"""File-level checks of a CSV batch file's header (pure: names only, no row contents).

A header names the table's columns; anything else is reported by name, except a first record
that names no column at all: that record is data (the file has no header) and holds row values,
so it is never quoted.
"""

from __future__ import annotations

from collections.abc import Sequence

from spark_destination.errors import BatchFileError, InvalidRequestError

__all__ = ["check_header"]


def check_header(path: str, header: Sequence[str], columns: Sequence[str]) -> None:
    """File-level checks of the header; names only header fields that are column names.

    A file whose first record names no column of the table has no header (its first record is
    data): say so without quoting the record, which holds row values.
    """
    known = set(columns)
    if not any(name in known for name in header):
        raise BatchFileError(
            f"batch file '{path}' has no header row: none of the {len(header)} fields of its "
            "first record is a column of the table"
        )
    for index, name in enumerate(header):
        if not name:
            raise BatchFileError(
                f"batch file '{path}' has an empty column name in its header (field {index + 1})"
            )
        if name not in known:
            raise InvalidRequestError(
                f"column '{name}' in batch file '{path}' is not a column of the table"
            )
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise BatchFileError(f"batch file '{path}' has column '{name}' twice in its header")
        seen.add(name)
