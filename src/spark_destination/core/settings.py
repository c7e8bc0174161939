"""How a configuration key is declared: a dataclass field carrying a ``Setting`` (pure).

``setting(...)`` makes the field; ``settings_of`` walks a settings dataclass's declarations and
``parse_settings`` builds one from text values. The keys themselves are declared in
``core.config``; the parsers a key names live in ``core.parsers``.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

from spark_destination.core.errors import ConfigurationError

T = TypeVar("T")
S = TypeVar("S")


class InvalidValue(ValueError):  # noqa: N818 - raised by parsers, reported as ConfigurationError
    """A parser's complaint about one value: what it must look like (the key is added)."""


class FormKind(enum.Enum):
    TEXT = enum.auto()
    SECRET = enum.auto()  # a password field: Fivetran masks it; never shown in messages or reprs
    DROPDOWN = enum.auto()  # one of ``choices``
    TOGGLE = enum.auto()  # "true" / "false"


@dataclass(frozen=True, slots=True, kw_only=True)
class Setting(Generic[T]):
    """What one configuration key is, besides its name, type and default (the field's)."""

    label: str
    description: str
    parse: Callable[[str], T]  # stripped, non-empty text -> value; raises InvalidValue
    kind: FormKind = FormKind.TEXT
    choices: tuple[str, ...] = ()
    placeholder: str | None = None
    # Fixed when the JVM starts: a request asking for another value gets a task saying so.
    new_jvm: bool = False
    # The default as text (form default, flag help); None when the default is "unset".
    default_text: str | None = None
    # More flag names (without ``--``) that people already use, e.g. ``master``.
    flag_aliases: tuple[str, ...] = ()
    # Operator settings only: the environment variable read when no flag is given, and whether
    # the flag may repeat (its values joined with commas).
    env: str | None = None
    repeatable: bool = False
    # The form shows the field only when one of these ``(key, value)`` holds (the key's field
    # has that value); empty: always.
    shown_when: tuple[tuple[str, str], ...] = ()
    # Set only by the server's start-up flags, never by a request, and never in the form: what
    # Capabilities announce, which carry no configuration (a request's value is ignored).
    server_only: bool = False

    @property
    def help(self) -> str:
        fixed = " Fixed when the destination starts Spark." if self.new_jvm else ""
        return self.description + fixed


_SETTING: Final = "spark_destination.setting"


def setting(
    default: T,
    *,
    parse: Callable[[str], T],
    label: str,
    description: str,
    kind: FormKind = FormKind.TEXT,
    placeholder: str | None = None,
    new_jvm: bool = False,
    flag_aliases: tuple[str, ...] = (),
    env: str | None = None,
    repeatable: bool = False,
    shown_when: tuple[tuple[str, str], ...] = (),
    server_only: bool = False,
) -> T:
    """A dataclass field declaring one key (dropdown choices come from an enum default)."""
    choices = tuple(str(e.value) for e in type(default)) if isinstance(default, enum.Enum) else ()
    meta = Setting(
        label=label,
        description=description,
        parse=parse,
        kind=kind,
        choices=choices,
        placeholder=placeholder,
        new_jvm=new_jvm,
        default_text=_as_text(default),
        flag_aliases=flag_aliases,
        env=env,
        repeatable=repeatable,
        shown_when=shown_when,
        server_only=server_only,
    )
    return dataclasses.field(
        default=default, repr=kind is not FormKind.SECRET, metadata={_SETTING: meta}
    )


def _as_text(value: object) -> str | None:
    if value is None or value == "" or value == ():
        return None
    return str(value.value) if isinstance(value, enum.Enum) else str(value)


def settings_of(model: type[Any]) -> Iterator[tuple[str, Setting[Any]]]:
    """``(key, Setting)`` of every field of a settings dataclass, in declaration order."""
    for item in dataclasses.fields(model):
        yield item.name, item.metadata[_SETTING]


def parse_settings(model: type[S], texts: Mapping[str, str]) -> S:
    """``model`` from text values by key; empty values take the declared defaults."""
    values: dict[str, Any] = {}
    for key, meta in settings_of(model):
        text = texts.get(key, "").strip()
        if not text:
            continue
        try:
            values[key] = meta.parse(text)
        except InvalidValue as exc:
            raise ConfigurationError(f"{key} {exc}") from None
    return model(**values)
