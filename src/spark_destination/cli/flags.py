"""The command line's configuration flags, derived from the configuration model.

Every key of ``core.config.DestinationConfig`` is a ``--kebab-case`` flag (plus the aliases it
declares, e.g. ``--master``); the values given become the defaults a request's empty keys take.
``OperatorConfig`` (the warehouse allow-list) gets its flags the same way. Nothing here names a
key: a key added to the model is a flag here without a change.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from spark_destination.core.config import DestinationConfig, OperatorConfig, operator_config
from spark_destination.core.settings import InvalidValue, Setting, settings_of

if TYPE_CHECKING:
    from spark_destination.engine.engine import Engine

_MODELS: tuple[type[Any], ...] = (DestinationConfig, OperatorConfig)


def _flag(key: str) -> str:
    return "--" + key.replace("_", "-")


def _checked(key: str, spec: Setting[Any]) -> Any:
    """An argparse ``type`` that validates a value with the key's parser and keeps its text."""

    def check(text: str) -> str:
        if text.strip():
            try:
                spec.parse(text.strip())
            except InvalidValue as exc:
                raise argparse.ArgumentTypeError(f"{key} {exc}") from None
        return text

    return check


def _help(spec: Setting[Any]) -> str:
    parts = [spec.help]
    if spec.env:
        parts.append(f"(default: ${spec.env}; unset: any)")
    elif spec.default_text is not None:
        parts.append(f"(default: {spec.default_text})")
    # argparse formats help with %: a literal one must be doubled.
    return " ".join(parts).replace("%", "%%")


def add_config_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per configuration key, and the operator's flags."""
    for model in _MODELS:
        group = parser.add_argument_group(
            "configuration (defaults for a request's empty keys)"
            if model is DestinationConfig
            else "operator settings (never set by a request)"
        )
        for key, spec in settings_of(model):
            names = [_flag(key), *(f"--{alias}" for alias in spec.flag_aliases)]
            group.add_argument(
                *names,
                dest=key,
                action="append" if spec.repeatable else "store",
                type=_checked(key, spec),
                metavar=key.upper(),
                help=_help(spec),
            )


def _texts(args: argparse.Namespace, model: type[Any]) -> dict[str, str]:
    texts = {}
    for key, _spec in settings_of(model):
        value = getattr(args, key, None)
        if isinstance(value, list):
            value = ",".join(value)
        if value:
            texts[key] = value
    return texts


def config_defaults(args: argparse.Namespace) -> dict[str, str]:
    """The configuration keys given as flags: the defaults of a request's empty keys."""
    return _texts(args, DestinationConfig)


def operator_settings(args: argparse.Namespace) -> OperatorConfig:
    """The operator's settings: the flags, else their environment variables."""
    return operator_config(_texts(args, OperatorConfig), os.environ)


def engine_for(args: argparse.Namespace) -> Engine:
    """The engine the flags describe (dialect, defaults, allow-list); Spark starts later."""
    from spark_destination.dialects.registry import dialect
    from spark_destination.engine.engine import Engine, SessionProvider

    chosen = dialect(getattr(args, "dialect", None) or "spark_iceberg")
    return Engine(
        SessionProvider.embedded(),
        defaults=config_defaults(args),
        dialect=chosen,
        allowed_warehouses=operator_settings(args).allowed_warehouses,
    )
