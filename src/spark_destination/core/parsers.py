"""Parsers of configuration values: stripped, non-empty text -> value (pure).

Each raises ``InvalidValue`` saying what the value must look like; the caller adds the key.
A key names its parser in its declaration (``core.config``), and a per-table override is
parsed by the same parser as its key.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping
from typing import Final, TypeVar

from spark_destination.core.errors import ConfigurationError
from spark_destination.core.names import (
    OWN_PREFIX,
    RESERVED_PREFIX,
    is_own_table,
    own_name_problem,
    path_problem,
)
from spark_destination.core.settings import InvalidValue

E = TypeVar("E", bound=enum.Enum)

# The value of a numeric key that turns its feature off (``merge_interval_ms``,
# ``merge_records_threshold``: ``_count_or_off``).
OFF: Final = -1

# A catalog name goes into Spark conf keys and SQL: a plain identifier only.
_CATALOG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Spark's byte-size syntax (JavaUtils.byteStringAs); a bare number is MiB for driver memory.
_MEMORY = re.compile(r"(\d+)\s*([kmgtp]?)b?", re.IGNORECASE)
_MEMORY_SHIFT: Final = {"": 20, "k": 10, "m": 20, "g": 30, "t": 40, "p": 50}
# A warehouse location with a scheme (``file://``, ``s3a://``) rather than a local path.
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
# The master URL forms Spark accepts (SparkContext.createTaskScheduler): anything else fails
# deep inside JVM start-up, or, on a running session, reads as "needs a restart".
_MASTER = re.compile(
    r"(local(\[(\*|[0-9]+)(,[0-9]+)?\])?"
    r"|local-cluster\[[0-9]+,[0-9]+,[0-9]+\]"
    r"|spark://[^\s/,]+:[0-9]+(,[^\s/,]+:[0-9]+)*"
    r"|yarn"
    r"|k8s://\S+"
    r"|mesos://\S+)"
)
_COORDINATE = re.compile(r"^[\w.-]+:[\w.-]+:[\w.+-]+$")
# An AWS region name (us-east-1, eu-central-2, us-gov-west-1, cn-north-1) or a store's own.
_REGION = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_HTTP_URL = re.compile(r"https?://[^\s/?#]+(?:/[^\s?#]*)?", re.IGNORECASE)
_SIGNING_NAME = re.compile(r"[a-z0-9-]+")


def check_catalog_name(name: str) -> str:
    """``name``, if it is a plain identifier (letters, digits, underscores)."""
    try:
        return catalog_name(name)
    except InvalidValue as exc:
        raise ConfigurationError(f"catalog name {exc}") from None


def memory_bytes(size: str) -> int:
    """Spark's memory syntax (``512m``, ``2g``, ``2048`` = MiB) in bytes."""
    match = _MEMORY.fullmatch(size.strip())
    if not match:
        raise ConfigurationError(f"driver memory {size!r} must look like '2g' or '512m'")
    return int(match.group(1)) << _MEMORY_SHIFT[match.group(2).lower()]


def is_uri(location: str) -> bool:
    return _URI.match(location) is not None


def text(text: str) -> str:
    return text


def yes_no(text: str) -> bool:
    """A toggle: Fivetran sends ``true`` / ``false``."""
    lowered = text.lower()
    if lowered not in ("true", "false"):
        raise InvalidValue(f"{text!r} must be true or false")
    return lowered == "true"


def catalog_name(text: str) -> str:
    if not _CATALOG_NAME.fullmatch(text):
        raise InvalidValue(f"{text!r} must be a plain name (letters, digits, underscores)")
    return text


def region(text: str) -> str:
    if not _REGION.fullmatch(text):
        raise InvalidValue(f"{text!r} must be a region name such as us-east-1")
    return text


def http_url(text: str) -> str:
    if not _HTTP_URL.fullmatch(text):
        raise InvalidValue(f"{text!r} must be an http:// or https:// URL")
    return text.rstrip("/")


def signing_name(text: str) -> str:
    if not _SIGNING_NAME.fullmatch(text):
        raise InvalidValue(f"{text!r} must be a service name such as s3tables or glue")
    return text


def memory(text: str) -> str:
    if not _MEMORY.fullmatch(text):
        raise InvalidValue(f"{text!r} must look like '2g' or '512m'")
    return text


# Below this a row group's own overhead (footer entry, pages, bloom filter) outweighs its data.
MIN_ROW_GROUP_BYTES: Final = 64 << 10


def size_bytes(text: str) -> int:
    match = _MEMORY.fullmatch(text)
    if not match:
        raise InvalidValue(f"{text!r} must look like '1m' or '512k'")
    return int(match.group(1)) << _MEMORY_SHIFT[match.group(2).lower()]


def row_group_size(text: str) -> str:
    if size_bytes(text) < MIN_ROW_GROUP_BYTES:
        raise InvalidValue(f"{text!r} must be at least 64k")
    return text


def master_url(text: str) -> str:
    if not _MASTER.fullmatch(text):
        raise InvalidValue(
            f"{text!r} is not a Spark master URL (local[*], local[N], spark://host:port, yarn, "
            "k8s://…)"
        )
    return text


def count(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        if not text.isdigit() or int(text) < minimum:
            raise InvalidValue(f"{text!r} must be a whole number >= {minimum}")
        return int(text)

    return parse


def count_or_off(minimum: int) -> Callable[[str], int]:
    """A whole number >= ``minimum``, or ``-1`` (off)."""
    whole = count(minimum)

    def parse(text: str) -> int:
        if text == str(OFF):
            return OFF
        try:
            return whole(text)
        except InvalidValue:
            message = f"{text!r} must be a whole number >= {minimum}, or {OFF} (off)"
            raise InvalidValue(message) from None

    return parse


def reserved_prefix(text: str) -> str:
    """A name prefix in the destination's own space (``core.names``): no Fivetran table can
    start with it, so no name made with it can be one Fivetran creates. ``sd__…`` names fit
    every supported catalog; the earlier ``__sd_…`` ones are still taken (a saved configuration
    may hold one), where the catalog takes them."""
    if not text.startswith((OWN_PREFIX, RESERVED_PREFIX)) or len(text) <= len(OWN_PREFIX):
        raise InvalidValue(
            f"{text!r} must start with {OWN_PREFIX!r} and go on (a name Fivetran never "
            "gives a table)"
        )
    problem = path_problem(text)
    if problem is not None:
        raise InvalidValue(f"{text!r} {problem}")
    if text.startswith(OWN_PREFIX) and (problem := own_name_problem(text + "x")) is not None:
        raise InvalidValue(f"{text!r} {problem}")
    return text


def choice(kind: type[E], aliases: Mapping[str, E] | None = None) -> Callable[[str], E]:
    """A parser of ``kind``'s values; ``aliases`` are older spellings a saved configuration may
    still hold (accepted, never offered)."""

    def parse(text: str) -> E:
        for member in kind:
            if str(member.value) == text.lower():
                return member
        if aliases and text.lower() in aliases:
            return aliases[text.lower()]
        choices = ", ".join(str(member.value) for member in kind)
        raise InvalidValue(f"{text!r} must be one of: {choices}")

    return parse


def spark_conf(text: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    for item in re.split(r"[;\n]", text):
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key.startswith("spark."):
            # Only the key is quoted: values may be credentials (object-store keys).
            raise InvalidValue(
                f"entry {key or '(empty)'!r} must look like 'spark.some.setting=value'"
            )
        pairs.append((key, value))
    return tuple(pairs)


def packages(text: str) -> tuple[str, ...]:
    packages = tuple(p.strip() for p in text.split(",") if p.strip())
    for package in packages:
        if not _COORDINATE.match(package):
            raise InvalidValue(
                f"entry {package!r} must be a Maven coordinate 'group:artifact:version'"
            )
    return packages


def locations(text: str) -> tuple[str, ...]:
    return tuple(w.strip() for w in text.split(",") if w.strip())


def reserved_table_name(text: str) -> str:
    """A name for one of the destination's own tables: in its own space (so it never collides
    with a Fivetran table; ``reserved_prefix``) and one plain path component."""
    if not is_own_table(text) or len(text) <= len(OWN_PREFIX):
        raise InvalidValue(f"{text!r} must start with {OWN_PREFIX!r}")
    problem = path_problem(text)
    if problem is None and text.startswith(OWN_PREFIX):
        problem = own_name_problem(text)
    if problem is not None:
        raise InvalidValue(f"{text!r} {problem}")
    return text
