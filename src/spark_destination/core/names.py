"""Which schema and table names a request may use.

A path-based catalog (Iceberg's Hadoop catalog) makes ``<warehouse>/<schema>/<table>/`` out of
the names, so a name is also a path component. A name that is not one plain component would
put files outside that folder: ``..`` is the parent (schema ``..`` wrote beside the warehouse,
table ``..`` at its root), ``.`` is the folder itself (schema ``.`` put a table at the root), a
``/`` makes nested folders, a NUL byte fails deep in the JVM. These rules hold for every
catalog and dialect (a dialect may refuse more: ``planner.target.Target.name_problem``), and
``TableRef`` enforces them on construction, so no table reference can name another place.

Names starting with ``RESERVED_PREFIX`` are the destination's own (staging columns, intermediate
and changes tables): a request may not create or name such a table or column.
"""

from __future__ import annotations

import unicodedata
from typing import Final

from spark_destination.core.errors import InvalidRequestError

# The longest file name common file systems take (ext4, XFS, tmpfs: 255 bytes).
MAX_NAME_BYTES: Final = 255
# Names of the destination's own tables and staged columns begin with this.
RESERVED_PREFIX: Final = "__sd_"
# ``/`` separates folders everywhere; Hadoop's ``Path`` reads ``:`` as a URI scheme.
_SEPARATORS: Final = frozenset("/:")


def path_problem(name: str) -> str | None:
    """Why ``name`` cannot be one path component of a warehouse, or None when it can."""
    if not name:
        return "is empty"
    if name in {".", ".."}:
        return "would name a folder outside its own (. and .. are not table or schema names)"
    if _SEPARATORS & set(name):
        return "holds a path separator ('/' or ':')"
    if any(unicodedata.category(ch) == "Cc" for ch in name):
        return "holds a control character (NUL, newline, tab, ...)"
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        return f"is longer than {MAX_NAME_BYTES} bytes (UTF-8)"
    return None


def check_path_name(kind: str, name: str) -> str:
    """``name``, if it is one plain path component; else an ``InvalidRequestError``."""
    problem = path_problem(name)
    if problem is not None:
        raise InvalidRequestError(f"{kind} name {name!r} {problem}")
    return name


def check_not_reserved(kind: str, name: str) -> str:
    """``name``, unless it is in the destination's reserved space."""
    if name.startswith(RESERVED_PREFIX):
        raise InvalidRequestError(
            f"{kind} name {name!r} starts with {RESERVED_PREFIX!r}, which this destination "
            "reserves for its own tables and columns"
        )
    return name
