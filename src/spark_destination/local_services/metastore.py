"""A real Hive metastore (2.3.9) on loopback, from the jars pip's pyspark ships.

pyspark's ``jars/`` folder holds a complete metastore: ``hive-metastore``, datanucleus, Derby
and libthrift. ``HiveMetaStore`` runs as a plain ``java`` process on a Derby database in a
folder of the caller's; nothing is downloaded. What Iceberg needs of it, and why:

- **Transaction tables.** Iceberg's ``HiveCatalog`` takes a metastore lock for every commit,
  and a metastore keeps its locks in ``HIVE_LOCKS`` and the other transaction tables, which
  ``datanucleus.schema.autoCreateAll`` does not create (a fresh database answers every lock
  request with an error, and Iceberg retries for minutes). Hive's own
  ``TxnDbUtil.prepDb`` creates them; it runs once, before the metastore starts, in a short-lived
  JVM reached through py4j (Derby is embedded: one JVM at a time may open the database).
- ``hive.metastore.disallow.incompatible.col.type.changes=false``: Iceberg keeps the Hive
  schema of a table in step with its own, and dropping a column shifts the later ones, which a
  metastore with the default (``true``) refuses ("The following columns have types
  incompatible with the existing columns in their respective positions").
- ``hive.in.test`` must stay false: it makes the metastore refuse Iceberg's locks
  (their ``operationType`` is UNSET).

``hive_metastore`` starts one on a free port, waits until it answers, and stops it by its pid
however the body ends. With ``file_systems`` (Hadoop settings, e.g. ``object_store``'s S3A
ones) it keeps tables on object storage: a metastore checks and creates each database's and
table's folder through Hadoop's file systems, so it runs with Hadoop's S3A (the ``s3a`` jar
group) and those settings in a ``core-site.xml`` of its own (mode 0600: it holds the keys).
``python -m spark_destination.local_services.metastore --dir D`` runs one in
the foreground for a user (``scripts/metastore.sh``). ``misconfigured`` starts one as a fresh
install is (no transaction tables, or the column-type check on), which is what the
destination's setup tests must catch.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from spark_destination.core.errors import ConfigurationError
from spark_destination.local_services.cluster import spark_home
from spark_destination.local_services.java_gateway import launch
from spark_destination.local_services.process_group import stop_group
from spark_destination.local_services.server_process import LOOPBACK, free_port
from spark_destination.runtime.spark.java import java_home

METASTORE_CLASS: Final = "org.apache.hadoop.hive.metastore.HiveMetaStore"
# The metastore needs little heap; a JVM's default is a quarter of the machine's memory.
METASTORE_HEAP: Final = "512m"
START_TIMEOUT_SECONDS: Final = 90.0

# The one setting Iceberg needs beyond a working metastore (see the module's doc).
COLUMN_TYPE_CHECK: Final = "hive.metastore.disallow.incompatible.col.type.changes"
# What every metastore started here has: an embedded Derby database created on first use,
# synchronous logging (log4j's asynchronous loggers want the LMAX disruptor, which pyspark's
# jars lack) and no schema-version check (the schema is created by datanucleus, not by
# schematool, so it carries no version row).
_BASE_SETTINGS: Final = {
    "datanucleus.schema.autoCreateAll": "true",
    "hive.metastore.schema.verification": "false",
    "hive.async.log.enabled": "false",
    "hive.in.test": "false",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Metastore:
    uri: str  # thrift://127.0.0.1:PORT
    warehouse: Path  # the metastore's default table location
    pid: int
    log: Path


def _derby_url(folder: Path) -> str:
    return f"jdbc:derby:;databaseName={folder / 'metastore_db'};create=true"


def _classpath(folder: Path | None = None) -> str:
    """pyspark's jars; with ``folder``'s ``conf`` (a ``core-site.xml``), that folder first and
    the S3A jars after."""
    parts = [str(spark_home() / "jars" / "*")]
    if folder is not None and (folder / "conf" / "core-site.xml").is_file():
        from spark_destination.runtime.spark.artifacts import JarGroup
        from spark_destination.runtime.spark.jars import group_jars

        s3a = group_jars(JarGroup.S3A, "a Hive metastore on S3")
        parts = [str(folder / "conf"), *parts, *map(str, s3a)]
    return os.pathsep.join(parts)


def _write_core_site(folder: Path, settings: Mapping[str, str]) -> None:
    from xml.sax.saxutils import escape

    conf = folder / "conf"
    conf.mkdir(exist_ok=True)
    rows = "".join(
        f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n"
        for k, v in settings.items()
    )
    path = conf / "core-site.xml"
    path.touch(mode=0o600)
    path.write_text(f'<?xml version="1.0"?>\n<configuration>\n{rows}</configuration>\n')


def _java() -> str:
    return str(Path(java_home()) / "bin" / "java")


def create_transaction_tables(folder: Path) -> None:
    """Create the metastore's transaction tables in the Derby database under ``folder``
    (Hive's own ``TxnDbUtil.prepDb``), in a JVM of its own that closes the database after."""
    from py4j.protocol import Py4JJavaError

    gateway = launch(
        _classpath(),
        heap=METASTORE_HEAP,
        java_options=[f"-Dderby.stream.error.file={folder / 'derby.log'}"],
    )
    try:
        jvm = gateway.jvm
        conf = jvm.org.apache.hadoop.hive.conf.HiveConf()
        conf.set("javax.jdo.option.ConnectionURL", _derby_url(folder))
        jvm.org.apache.hadoop.hive.metastore.txn.TxnDbUtil.prepDb(conf)
        # Derby says a clean shutdown with an exception (SQLState XJ015).
        with contextlib.suppress(Py4JJavaError):
            jvm.java.sql.DriverManager.getConnection("jdbc:derby:;shutdown=true")
    finally:
        gateway.close()


def metastore_settings(
    folder: Path, warehouse: Path, *, allow_column_changes: bool = True
) -> dict[str, str]:
    """The system properties of a metastore on ``folder``'s Derby database."""
    return {
        **_BASE_SETTINGS,
        "javax.jdo.option.ConnectionURL": _derby_url(folder),
        "hive.metastore.warehouse.dir": str(warehouse),
        COLUMN_TYPE_CHECK: "false" if allow_column_changes else "true",
    }


def _answers(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        return probe.connect_ex((LOOPBACK, port)) == 0


def stop(pid: int) -> None:
    """Stop a metastore by its pid (and its process group): TERM, then KILL."""
    stop_group(pid)


def start(
    folder: Path,
    *,
    port: int | None = None,
    transaction_tables: bool = True,
    allow_column_changes: bool = True,
    file_systems: Mapping[str, str] | None = None,
) -> Metastore:
    """Start a metastore on ``folder`` (created if missing) and wait until it answers.

    ``transaction_tables`` / ``allow_column_changes`` false: a metastore as a fresh install
    has it, which Iceberg cannot commit to (for the setup tests' sake). ``file_systems``:
    Hadoop settings for object storage (see the module's doc)."""
    folder.mkdir(parents=True, exist_ok=True)
    if file_systems:
        _write_core_site(folder, file_systems)
    warehouse = folder / "warehouse"
    warehouse.mkdir(exist_ok=True)
    if transaction_tables and not (folder / "metastore_db").exists():
        create_transaction_tables(folder)
    port = port or free_port()
    settings = metastore_settings(folder, warehouse, allow_column_changes=allow_column_changes)
    command = [
        _java(),
        f"-Xmx{METASTORE_HEAP}",
        *(f"-D{key}={value}" for key, value in settings.items()),
        "-cp",
        _classpath(folder),
        METASTORE_CLASS,
        "-p",
        str(port),
    ]
    log = folder / "metastore.log"
    with log.open("ab") as out:
        # A session of its own, so stopping it by pid stops nothing of the caller's.
        process = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
            command, cwd=folder, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while not _answers(port):
        if process.poll() is not None:
            raise ConfigurationError(
                f"the Hive metastore exited with {process.returncode} before it answered on "
                f"port {port}; see {log}"
            )
        if time.monotonic() > deadline:
            stop(process.pid)
            raise ConfigurationError(
                f"the Hive metastore did not answer on port {port} within "
                f"{START_TIMEOUT_SECONDS:.0f} s; see {log}"
            )
        time.sleep(0.2)
    return Metastore(
        uri=f"thrift://{LOOPBACK}:{port}", warehouse=warehouse, pid=process.pid, log=log
    )


@contextlib.contextmanager
def hive_metastore(
    folder: Path,
    *,
    transaction_tables: bool = True,
    allow_column_changes: bool = True,
    file_systems: Mapping[str, str] | None = None,
) -> Iterator[Metastore]:
    """A metastore for the body; stopped by its pid however the body ends."""
    metastore = start(
        folder,
        transaction_tables=transaction_tables,
        allow_column_changes=allow_column_changes,
        file_systems=file_systems,
    )
    try:
        yield metastore
    finally:
        stop(metastore.pid)


def destination_configuration(metastore: Metastore) -> Mapping[str, str]:
    """The destination's configuration keys for tables in ``metastore``."""
    return {
        "catalog_type": "hive",
        "catalog_uri": metastore.uri,
        "warehouse": str(metastore.warehouse),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m spark_destination.local_services.metastore",
        description="Run a Hive metastore (from pyspark's jars, on Derby) in the foreground.",
    )
    parser.add_argument("--dir", required=True, type=Path, help="its database and warehouse")
    parser.add_argument("--port", type=int, default=9083)
    args = parser.parse_args(argv)
    metastore = start(args.dir.resolve(), port=args.port)
    print(
        f"Hive metastore at {metastore.uri} (pid {metastore.pid}), warehouse "
        f"{metastore.warehouse}; log {metastore.log}. The destination's flags:\n"
        f"  --catalog-type hive --catalog-uri {metastore.uri} --warehouse {metastore.warehouse}\n"
        "Ctrl-C stops it.",
        flush=True,
    )
    stopping = False

    def on_signal(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    try:
        while not stopping:
            time.sleep(0.5)
            finished, _ = os.waitpid(metastore.pid, os.WNOHANG)
            if finished:
                print("the metastore stopped; see its log", file=sys.stderr)
                return 1
    except KeyboardInterrupt:
        pass
    stop(metastore.pid)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
