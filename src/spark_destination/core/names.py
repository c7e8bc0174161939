"""Which schema and table names a request may use.

A path-based catalog (Iceberg's Hadoop catalog) makes ``<warehouse>/<schema>/<table>/`` out of
the names, so a name is also a path component. A name that is not one plain component would
put files outside that folder: ``..`` is the parent (schema ``..`` wrote beside the warehouse,
table ``..`` at its root), ``.`` is the folder itself (schema ``.`` put a table at the root), a
``/`` makes nested folders, a NUL byte fails deep in the JVM. These rules hold for every
catalog and dialect (a dialect may refuse more: ``planner.target.Target.name_problem``), and
``TableRef`` enforces them on construction, so no table reference can name another place.

The destination's own names, which a request may not use:

- columns it stages or computes start with ``RESERVED_PREFIX`` (``__sd_``);
- tables and namespaces it makes (deferred mode's intermediate tables, the changes table, the
  setup test's probe namespace) start with ``OWN_PREFIX`` (``sd__``). They follow the
  strictest naming rules of the catalogs the destination supports (``own_name_problem``: S3
  Tables' lower-case letters, digits and ``_``, a letter or digit first and last, at most 255
  bytes, which SeaweedFS's Iceberg REST catalog enforces too), and Fivetran's naming never
  makes such a name: it collapses repeated underscores;
- tables made under the earlier names (``__sd_pending_…``, ``__sd_changes``) are still the
  destination's own (``is_own_table``), and still refused as request names.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from spark_destination.core.errors import InvalidRequestError

# The longest file name common file systems take (ext4, XFS, tmpfs: 255 bytes).
MAX_NAME_BYTES: Final = 255
# Names of the columns the destination stages or computes begin with this (and, before, of its
# own tables).
RESERVED_PREFIX: Final = "__sd_"
# Names of the tables and namespaces the destination makes begin with this.
OWN_PREFIX: Final = "sd__"
# What every catalog the destination supports takes as a table or namespace name: S3 Tables'
# rules (lower-case ASCII letters, digits, '_'; a letter or digit first and last).
_OWN_NAME: Final = re.compile(r"[a-z0-9](?:[a-z0-9_]*[a-z0-9])?")
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


def is_own_table(name: str) -> bool:
    """Whether ``name`` is one of the destination's own tables (today's names or earlier)."""
    return name.startswith((OWN_PREFIX, RESERVED_PREFIX))


def own_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be one of the destination's own table or namespace names in every
    supported catalog, or None."""
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        return f"is longer than {MAX_NAME_BYTES} bytes"
    if not _OWN_NAME.fullmatch(name):
        return (
            "must be lower-case letters, digits and '_', starting and ending with a letter or "
            "digit (what S3 Tables-style catalogs take)"
        )
    return None


def check_not_reserved(kind: str, name: str) -> str:
    """``name``, unless it is in the destination's reserved space: ``__sd_`` for every name,
    ``sd__`` too for tables and schemas (the destination's own tables and namespaces)."""
    prefixes = (RESERVED_PREFIX,) if kind == "column" else (RESERVED_PREFIX, OWN_PREFIX)
    for prefix in prefixes:
        if name.startswith(prefix):
            raise InvalidRequestError(
                f"{kind} name {name!r} starts with {prefix!r}, which this destination reserves "
                "for its own tables and columns"
            )
    return name
