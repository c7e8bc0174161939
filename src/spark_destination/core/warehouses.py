"""Which warehouses a request may name: the operator's allow-list (pure).

A request chooses its warehouse; an operator who serves several teams limits those choices
with ``serve --allowed-warehouses`` (``core.config.OperatorConfig``). Local paths compare after
resolving symbolic links and ``..``, URIs lexically with their authority (an S3 root is a bucket
and a prefix of whole path segments: ``s3://lake/team-a`` allows ``s3://lake/team-a/x``, never
``s3://lake/team-ab``; ``s3a://`` and ``s3n://`` name the same buckets).
"""

from __future__ import annotations

import os
import posixpath
from typing import Final
from urllib.parse import unquote, urlsplit

from spark_destination.core.errors import ConfigurationError
from spark_destination.core.parsers import is_uri

# The operator's allow-list, when not given as ``--allowed-warehouses``: comma-separated.
ALLOWED_WAREHOUSES_ENV: Final = "SPARK_DESTINATION_ALLOWED_WAREHOUSES"
# Hadoop's names for S3 buckets: ``s3a://b/p`` and ``s3://b/p`` are the same objects, so an
# allow-list root in one names the other too.
_SAME_AS_S3: Final = frozenset({"s3a", "s3n"})


def _normalized(location: str) -> tuple[str, str]:
    """``(scheme, path)`` with the path made absolute and free of ``.``/``..`` segments and
    symbolic links (local paths and ``file:`` URIs) or normalised lexically (other URIs, whose
    authority stays part of the scheme)."""
    text = location.strip()
    if is_uri(text):
        parsed = urlsplit(text)
        scheme = parsed.scheme.lower()
        scheme = "s3" if scheme in _SAME_AS_S3 else scheme
        if scheme != "file":
            path = posixpath.normpath("/" + unquote(parsed.path).lstrip("/"))
            return f"{scheme}://{parsed.netloc.lower()}", path
        text = unquote(parsed.path)
    return "", os.path.realpath(os.path.abspath(os.path.expanduser(text)))


def warehouse_allowed(warehouse: str, allowed: tuple[str, ...]) -> bool:
    """``warehouse`` is one of the ``allowed`` roots or inside one (an empty list allows all).

    Local paths compare after resolving symbolic links, so a link inside an allowed root that
    points elsewhere does not lead out of it; ``..`` never does.
    """
    if not allowed:
        return True
    scheme, path = _normalized(warehouse)
    for root in allowed:
        root_scheme, root_path = _normalized(root)
        if scheme == root_scheme and (
            path == root_path or path.startswith(root_path.rstrip("/") + "/")
        ):
            return True
    return False


def check_warehouse_allowed(warehouse: str, allowed: tuple[str, ...]) -> None:
    if not warehouse_allowed(warehouse, allowed):
        raise ConfigurationError(
            f"warehouse {warehouse!r} is not one this server allows: its operator limits "
            f"requests to a list of warehouse locations (serve --allowed-warehouses, "
            f"{ALLOWED_WAREHOUSES_ENV}); choose a warehouse inside one of them"
        )
