"""``spark-destination install-jars [GROUP…]``: the one install step for the JVM's jars.

Fetches the pinned artifacts (``runtime/spark/artifacts.py``) once, checks their SHA-256 and
caches them (``runtime/spark/jar_install.py``); ``scripts/bootstrap.sh`` and ``build.sh`` run
it, a serving destination never does.
"""

from __future__ import annotations

import argparse
from typing import Any


def add_command(sub: Any) -> None:
    from spark_destination.runtime.spark import jar_install

    command = sub.add_parser(
        "install-jars",
        help="fetch the pinned jars (Iceberg, its AWS bundle, Delta) once, check their SHA-256 "
        "and cache them; nothing is fetched while serving",
    )
    jar_install.add_arguments(command)
    command.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spark_destination.runtime.spark import jar_install

    return jar_install.run(args)
