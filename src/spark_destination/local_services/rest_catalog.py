"""A real Iceberg REST catalog on loopback, from the jars the project already has.

The runtime jar holds Iceberg's server-side REST code: ``rest.CatalogHandlers`` turns each
request object of the REST spec (``open-api/rest-catalog-open-api.yaml``) into catalog calls,
and ``rest.RESTSerializers`` (de)serialises them. Iceberg's own test server puts a servlet
around them; that servlet is not in the runtime jar. So this module's HTTP layer is Python's
``ThreadingHTTPServer``: it routes the spec's paths, checks OAuth2 tokens, and calls the
handlers in a JVM reached through py4j, with an ObjectMapper set as Iceberg's own
(``RESTObjectMapper``, which is package-private). Errors are answered with the spec's codes,
as Iceberg's ``RESTCatalogAdapter`` maps them (404 no such table, 409 already exists or a lost
commit race, 500 unknown commit state…): the client turns them back into the same exceptions,
which the destination's commit handling depends on.

The backing catalog is Iceberg's ``HadoopCatalog`` on the folder's ``warehouse``: table
metadata and data are files there, written by Iceberg's own commit path, so a restarted server
still has its tables. Its commits are atomic within one process (a JVM-wide lock, then a
rename that fails if another commit won), and this server is one process. It keeps no
namespace properties, so the server keeps them itself (a JSON file next to the warehouse), as
many REST services keep their own records; it cannot rename tables (406, as the spec allows).
Tried and refused: ``JdbcCatalog`` on the Derby in pyspark's jars (its queries use
``LIMIT 1``, which Derby rejects); ``InMemoryCatalog`` (it hard-codes an in-memory FileIO, so
the metadata files clients read by location are not on disk: the destination's reads of
``metadata.json`` failed with ``FileNotFoundException``).

OAuth2: ``POST /v1/oauth/tokens`` (``client_credentials``, and the token exchange a client uses
to refresh) checks the configured ``client_id:client_secret`` (kept in a file of the folder,
mode 0600, never printed) and issues a token; every other route answers 401 without
``Authorization: Bearer <token>``.

A fault for the tests (``--faults`` only): ``POST /_faults {"commit_unknown": N}`` makes the
next N table commits answer 504 after they applied, which Iceberg's client reports as
``CommitStateUnknownException``.

``start`` runs one as its own process
(``python -m spark_destination.local_services.rest_catalog``) on a free port and ``stop`` ends
it by its pid; ``scripts/rest_catalog.sh --dir D`` runs one in the foreground for a user.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final

from spark_destination.core.errors import ConfigurationError
from spark_destination.local_services.java_gateway import launch
from spark_destination.local_services.process_group import stop_group
from spark_destination.local_services.server_process import LOOPBACK, free_port

START_TIMEOUT_SECONDS: Final = 90.0
SERVER_HEAP: Final = "512m"
CREDENTIAL_FILE: Final = "credential"
NAMESPACES_FILE: Final = "namespace_properties.json"
TOKEN_LIFETIME_SECONDS: Final = 3600
FAULTS_PATH: Final = "/_faults"

# Java exception class (simple name) -> HTTP status, as RESTCatalogAdapter answers them; the
# client's error handlers pick the exception from the status and the ``type`` field.
ERROR_CODES: Final = {
    "IllegalArgumentException": 400,
    "ValidationException": 400,
    "NamespaceNotEmptyException": 400,
    "BadRequestException": 400,
    "NotAuthorizedException": 401,
    "ForbiddenException": 403,
    "NoSuchNamespaceException": 404,
    "NoSuchTableException": 404,
    "NoSuchViewException": 404,
    "NoSuchIcebergTableException": 404,
    "UnsupportedOperationException": 406,
    "AlreadyExistsException": 409,
    "CommitFailedException": 409,
    "UnprocessableEntityException": 422,
    "CommitStateUnknownException": 500,
}

_PKG: Final = "org.apache.iceberg.rest."
_JACKSON: Final = "org.apache.iceberg.shaded.com.fasterxml.jackson."


@dataclass(frozen=True, slots=True, kw_only=True)
class RestCatalog:
    uri: str  # http://127.0.0.1:PORT
    warehouse: Path  # where tables' files go
    pid: int
    log: Path
    # OAuth2 client credential ``client_id:client_secret``: never in logs or reprs.
    credential: str = field(repr=False)


# --- The JVM side: Iceberg's handlers over a HadoopCatalog ----------------------------------


class _Backend:
    """One JVM (py4j gateway) holding the catalog; py4j calls are safe from many threads."""

    def __init__(self, warehouse: Path, log_dir: Path) -> None:
        from spark_destination.local_services.cluster import spark_home
        from spark_destination.runtime.spark.artifacts import JarGroup
        from spark_destination.runtime.spark.jars import group_jars

        classpath = os.pathsep.join(
            (
                str(spark_home() / "jars" / "*"),
                *map(str, group_jars(JarGroup.ICEBERG, "the REST catalog server")),
            )
        )
        self._gateway = launch(classpath, heap=SERVER_HEAP, stderr=(log_dir / "jvm.log").open("ab"))
        jvm = self._gateway.jvm
        self.jvm = jvm
        catalog = jvm.org.apache.iceberg.hadoop.HadoopCatalog()
        catalog.setConf(jvm.org.apache.hadoop.conf.Configuration())
        properties = jvm.java.util.HashMap()
        properties.put("warehouse", str(warehouse))
        catalog.initialize("rest_backend", properties)
        self.catalog = catalog
        self.namespace_properties = _NamespaceProperties(warehouse.parent / NAMESPACES_FILE)
        self.handlers = jvm.org.apache.iceberg.rest.CatalogHandlers
        self.mapper = self._mapper()

    def _mapper(self) -> Any:
        # What Iceberg's package-private RESTObjectMapper.mapper() builds.
        jvm = self.jvm
        jackson = jvm.org.apache.iceberg.shaded.com.fasterxml.jackson
        mapper = jackson.databind.ObjectMapper(jackson.core.JsonFactory())
        mapper.setVisibility(
            jackson.annotation.PropertyAccessor.FIELD,
            jackson.annotation.JsonAutoDetect.Visibility.ANY,
        )
        mapper.configure(jackson.databind.DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, False)
        mapper.setPropertyNamingStrategy(
            jackson.databind.PropertyNamingStrategies.KebabCaseStrategy()
        )
        jvm.org.apache.iceberg.rest.RESTSerializers.registerAll(mapper)
        return mapper

    def read(self, body: bytes, request_class: str) -> Any:
        klass = self.jvm.java.lang.Class.forName(_PKG + request_class)
        return self.mapper.readValue(body.decode("utf-8"), klass)

    def write(self, response: Any) -> bytes:
        return str(self.mapper.writeValueAsString(response)).encode("utf-8")

    def namespace(self, encoded: str) -> Any:
        return self.jvm.org.apache.iceberg.rest.RESTUtil.decodeNamespace(encoded)

    def identifier(self, namespace: str, table: str) -> Any:
        decoded = self.jvm.org.apache.iceberg.rest.RESTUtil.decodeString(table)
        return self.jvm.org.apache.iceberg.catalog.TableIdentifier.of(
            self.namespace(namespace), decoded
        )

    def commit_transaction(self, request: Any) -> Answer:
        """Every table's requirements checked and its updates applied first, then each table
        committed (compare-and-swap on its metadata). As Iceberg's own test adapter, not atomic
        across tables: a later table's lost race leaves the earlier ones committed.
        ``CatalogHandlers.commit`` does this per table but is not public."""
        jvm = self.jvm
        pending = []
        for change in request.tableChanges():
            operations = self.catalog.loadTable(change.identifier()).operations()
            base = operations.refresh()
            for requirement in change.requirements():
                requirement.validate(base)  # CommitFailedException: 409
            builder = jvm.org.apache.iceberg.TableMetadata.buildFrom(base)
            for update in change.updates():
                update.applyTo(builder)
            pending.append((operations, base, builder.build()))
        for operations, base, updated in pending:
            operations.commit(base, updated)
        return _no_content()

    def close(self) -> None:
        self._gateway.close()


@dataclass
class _NamespaceProperties:
    """Namespace properties, which HadoopCatalog does not keep: one JSON file, rewritten
    whole under a lock (namespaces are few and change rarely)."""

    path: Path
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _load(self) -> dict[str, dict[str, str]]:
        if not self.path.is_file():
            return {}
        loaded: dict[str, dict[str, str]] = json.loads(self.path.read_text())
        return loaded

    def get(self, key: str) -> dict[str, str]:
        with self.lock:
            return dict(self._load().get(key, {}))

    def update(self, key: str, set_: Mapping[str, str], remove: list[str]) -> list[str]:
        """Apply the change; the keys of ``remove`` that were not there."""
        with self.lock:
            stored = self._load()
            current = stored.setdefault(key, {})
            missing = [k for k in remove if k not in current]
            for name in remove:
                current.pop(name, None)
            current.update(set_)
            if not current:
                stored.pop(key)
            temp = self.path.with_suffix(".tmp")
            temp.write_text(json.dumps(stored, sort_keys=True))
            os.replace(temp, self.path)
            return missing


# --- Routing ----------------------------------------------------------------------------------

# (status, JSON body or None)
Answer = tuple[int, bytes | None]


@dataclass(frozen=True, slots=True)
class _Route:
    method: str
    pattern: re.Pattern[str]
    handle: Callable[[_Backend, Mapping[str, str], Mapping[str, str], bytes], Answer]
    commits: bool = False  # a table commit: the fault hook applies


def _ok(backend: _Backend, response: Any) -> Answer:
    return HTTPStatus.OK, backend.write(response)


def _no_content(_result: object = None) -> Answer:
    return HTTPStatus.NO_CONTENT, None


def _list_namespaces(b: _Backend, v: Mapping[str, str], q: Mapping[str, str], _: bytes) -> Answer:
    parent = (
        b.namespace(q["parent"])
        if q.get("parent")
        else b.jvm.org.apache.iceberg.catalog.Namespace.empty()
    )
    if q.get("pageSize"):
        return _ok(
            b, b.handlers.listNamespaces(b.catalog, parent, q.get("pageToken"), q["pageSize"])
        )
    return _ok(b, b.handlers.listNamespaces(b.catalog, parent))


def _list_tables(b: _Backend, v: Mapping[str, str], q: Mapping[str, str], _: bytes) -> Answer:
    namespace = b.namespace(v["ns"])
    if q.get("pageSize"):
        return _ok(
            b, b.handlers.listTables(b.catalog, namespace, q.get("pageToken"), q["pageSize"])
        )
    return _ok(b, b.handlers.listTables(b.catalog, namespace))


def _create_table(b: _Backend, v: Mapping[str, str], _q: Mapping[str, str], body: bytes) -> Answer:
    request = b.read(body, "requests.CreateTableRequest")
    request.validate()
    namespace = b.namespace(v["ns"])
    if request.stageCreate():
        return _ok(b, b.handlers.stageTableCreate(b.catalog, namespace, request))
    return _ok(b, b.handlers.createTable(b.catalog, namespace, request))


def _drop_table(b: _Backend, v: Mapping[str, str], q: Mapping[str, str], _: bytes) -> Answer:
    ident = b.identifier(v["ns"], v["table"])
    if q.get("purgeRequested", "false").lower() == "true":
        b.handlers.purgeTable(b.catalog, ident)
    else:
        b.handlers.dropTable(b.catalog, ident)
    return _no_content()


def _create_namespace(
    b: _Backend, _v: Mapping[str, str], _q: Mapping[str, str], body: bytes
) -> Answer:
    request = json.loads(body)
    properties = {str(k): str(v) for k, v in (request.get("properties") or {}).items()}
    without = json.dumps({"namespace": request["namespace"]}).encode()
    created = json.loads(
        b.write(
            b.handlers.createNamespace(
                b.catalog, b.read(without, "requests.CreateNamespaceRequest")
            )
        )
    )
    b.namespace_properties.update(_key(created["namespace"]), properties, [])
    return HTTPStatus.OK, json.dumps({**created, "properties": properties}).encode()


def _load_namespace(b: _Backend, v: Mapping[str, str], _q: Mapping[str, str], _: bytes) -> Answer:
    loaded = json.loads(b.write(b.handlers.loadNamespace(b.catalog, b.namespace(v["ns"]))))
    properties = {
        **loaded.get("properties", {}),
        **b.namespace_properties.get(_key(loaded["namespace"])),
    }
    return HTTPStatus.OK, json.dumps({**loaded, "properties": properties}).encode()


def _update_namespace(
    b: _Backend, v: Mapping[str, str], _q: Mapping[str, str], body: bytes
) -> Answer:
    namespace = b.namespace(v["ns"])
    b.handlers.namespaceExists(b.catalog, namespace)  # NoSuchNamespaceException: 404
    request = json.loads(body or b"{}")
    updates = {str(k): str(x) for k, x in (request.get("updates") or {}).items()}
    removals = [str(k) for k in request.get("removals") or []]
    key = _key(list(namespace.levels()))
    missing = b.namespace_properties.update(key, updates, removals)
    answer = {
        "updated": sorted(updates),
        "removed": [k for k in removals if k not in missing],
        "missing": missing,
    }
    return HTTPStatus.OK, json.dumps(answer).encode()


def _drop_namespace(b: _Backend, v: Mapping[str, str], _q: Mapping[str, str], _: bytes) -> Answer:
    namespace = b.namespace(v["ns"])
    b.handlers.dropNamespace(b.catalog, namespace)
    key = _key(list(namespace.levels()))
    b.namespace_properties.update(key, {}, list(b.namespace_properties.get(key)))
    return _no_content()


def _key(levels: list[str]) -> str:
    return "\x1f".join(levels)


_NS = r"(?P<ns>[^/]+)"
_TABLE = r"(?P<table>[^/]+)"


def _route(
    method: str,
    path: str,
    handle: Callable[[_Backend, Mapping[str, str], Mapping[str, str], bytes], Answer],
    *,
    commits: bool = False,
) -> _Route:
    return _Route(method, re.compile(f"/v1/{path}"), handle, commits)


ROUTES: Final = (
    _route("GET", "namespaces", _list_namespaces),
    _route("POST", "namespaces", _create_namespace),
    _route("GET", f"namespaces/{_NS}", _load_namespace),
    _route(
        "HEAD",
        f"namespaces/{_NS}",
        lambda b, v, q, _: _no_content(b.handlers.namespaceExists(b.catalog, b.namespace(v["ns"]))),
    ),
    _route("DELETE", f"namespaces/{_NS}", _drop_namespace),
    _route("POST", f"namespaces/{_NS}/properties", _update_namespace),
    _route("GET", f"namespaces/{_NS}/tables", _list_tables),
    _route("POST", f"namespaces/{_NS}/tables", _create_table),
    _route(
        "POST",
        f"namespaces/{_NS}/register",
        lambda b, v, q, body: _ok(
            b,
            b.handlers.registerTable(
                b.catalog, b.namespace(v["ns"]), b.read(body, "requests.RegisterTableRequest")
            ),
        ),
    ),
    _route(
        "GET",
        f"namespaces/{_NS}/tables/{_TABLE}",
        lambda b, v, q, _: _ok(
            b, b.handlers.loadTable(b.catalog, b.identifier(v["ns"], v["table"]))
        ),
    ),
    _route(
        "HEAD",
        f"namespaces/{_NS}/tables/{_TABLE}",
        lambda b, v, q, _: _no_content(
            b.handlers.tableExists(b.catalog, b.identifier(v["ns"], v["table"]))
        ),
    ),
    _route(
        "POST",
        f"namespaces/{_NS}/tables/{_TABLE}",
        lambda b, v, q, body: _ok(
            b,
            b.handlers.updateTable(
                b.catalog,
                b.identifier(v["ns"], v["table"]),
                b.read(body, "requests.UpdateTableRequest"),
            ),
        ),
        commits=True,
    ),
    _route("DELETE", f"namespaces/{_NS}/tables/{_TABLE}", _drop_table),
    # Scan and commit reports: accepted and dropped, as Iceberg's own test server does.
    _route("POST", f"namespaces/{_NS}/tables/{_TABLE}/metrics", lambda b, v, q, _: _no_content()),
    _route(
        "POST",
        "tables/rename",
        lambda b, v, q, body: _no_content(
            b.handlers.renameTable(b.catalog, b.read(body, "requests.RenameTableRequest"))
        ),
    ),
    _route(
        "POST",
        "transactions/commit",
        lambda b, v, q, body: b.commit_transaction(
            b.read(body, "requests.CommitTransactionRequest")
        ),
        commits=True,
    ),
)


def _error(status: int, kind: str, message: str) -> Answer:
    body = {"error": {"message": message, "type": kind, "code": status}}
    return status, json.dumps(body).encode()


# --- HTTP -------------------------------------------------------------------------------------


@dataclass
class _State:
    backend: _Backend
    client_id: str
    client_secret: str = field(repr=False)
    faults_enabled: bool = False
    tokens: set[str] = field(default_factory=set, repr=False)
    commit_unknown: int = 0  # table commits still to answer 504 after applying
    lock: threading.Lock = field(default_factory=threading.Lock)

    def issue(self) -> str:
        token = secrets.token_urlsafe(32)
        with self.lock:
            self.tokens.add(token)
        return token

    def take_fault(self) -> bool:
        with self.lock:
            if self.commit_unknown > 0:
                self.commit_unknown -= 1
                return True
            return False


class _Handler(BaseHTTPRequestHandler):
    server_version = "spark-destination-rest-catalog"
    protocol_version = "HTTP/1.1"
    state: _State  # set on the subclass made by ``serve``

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib's name
        # Method, path and status only (paths name namespaces and tables, never values).
        sys.stderr.write(f"{self.log_date_time_string()} {format % args}\n")

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def _dispatch(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        try:
            status, payload = self._answer(method, url.path, query, body)
        except Exception as exc:  # noqa: BLE001 - every failure becomes an error answer
            status, payload = self._java_error(exc)
        self.send_response(status)
        if payload is not None and method != "HEAD":
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        else:
            self.send_header("Content-Length", "0")
            self.end_headers()

    def _answer(self, method: str, path: str, query: Mapping[str, str], body: bytes) -> Answer:
        state = self.state
        if method == "POST" and path == "/v1/oauth/tokens":
            return self._token(body)
        if not self._authorized():
            return _error(401, "NotAuthorizedException", "missing or unknown bearer token")
        if method == "GET" and path == "/v1/config":
            # No endpoints listed: the client assumes the spec's default set (namespaces, tables,
            # transactions), which is what ROUTES serves.
            return HTTPStatus.OK, json.dumps({"defaults": {}, "overrides": {}}).encode()
        if method == "POST" and path == FAULTS_PATH and state.faults_enabled:
            faults = json.loads(body or b"{}")
            with state.lock:
                state.commit_unknown = int(faults.get("commit_unknown", 0))
            return _no_content()
        for route in ROUTES:
            match = route.pattern.fullmatch(path)
            if match is None or route.method != method:
                continue
            answer = route.handle(state.backend, match.groupdict(), query, body)
            if route.commits and state.take_fault():
                # Applied, then "lost" on the way back, as a gateway timing out would.
                return _error(504, "GatewayTimeout", "injected: the commit applied, no answer")
            return answer
        return _error(400, "BadRequestException", f"No route for request: {method} {path}")

    def _authorized(self) -> bool:
        header = self.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        with self.state.lock:
            return scheme.lower() == "bearer" and token in self.state.tokens

    def _token(self, body: bytes) -> Answer:
        form = dict(urllib.parse.parse_qsl(body.decode("utf-8")))
        state = self.state
        match form.get("grant_type"):
            case "client_credentials":
                good = secrets.compare_digest(
                    form.get("client_id", ""), state.client_id
                ) and secrets.compare_digest(form.get("client_secret", ""), state.client_secret)
            case "urn:ietf:params:oauth:grant-type:token-exchange":
                with state.lock:
                    good = form.get("subject_token", "") in state.tokens
            case _:
                return HTTPStatus.BAD_REQUEST, json.dumps(
                    {"error": "unsupported_grant_type", "error_description": "unsupported grant"}
                ).encode()
        if not good:
            return HTTPStatus.UNAUTHORIZED, json.dumps(
                {"error": "invalid_client", "error_description": "unknown client credential"}
            ).encode()
        answer = {
            "access_token": state.issue(),
            "token_type": "bearer",
            "expires_in": TOKEN_LIFETIME_SECONDS,
            "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
        }
        return HTTPStatus.OK, json.dumps(answer).encode()

    def _java_error(self, exc: Exception) -> Answer:
        java = getattr(exc, "java_exception", None)
        if java is None:
            return _error(500, type(exc).__name__, "the REST catalog server failed")
        kind = str(java.getClass().getSimpleName())
        message = str(java.getMessage() or kind)
        return _error(ERROR_CODES.get(kind, 500), kind, message)


def _read_credential(folder: Path) -> tuple[str, str]:
    path = folder / CREDENTIAL_FILE
    if not path.is_file():
        write_credential(folder, f"spark-destination:{secrets.token_urlsafe(24)}")
    client_id, _, secret = path.read_text().strip().partition(":")
    if not client_id or not secret:
        raise ConfigurationError(f"{path} must hold 'client_id:client_secret'")
    return client_id, secret


def write_credential(folder: Path, credential: str) -> None:
    path = folder / CREDENTIAL_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(credential)


def serve(
    folder: Path, port: int, *, faults: bool = False, ready: Callable[[], None] | None = None
) -> None:
    """Serve the catalog on ``127.0.0.1:port`` until SIGTERM or Ctrl-C."""
    folder.mkdir(parents=True, exist_ok=True)
    warehouse = folder / "warehouse"
    warehouse.mkdir(exist_ok=True)
    client_id, secret = _read_credential(folder)
    backend = _Backend(warehouse, folder)
    state = _State(
        backend=backend, client_id=client_id, client_secret=secret, faults_enabled=faults
    )
    handler = type("Handler", (_Handler,), {"state": state})
    server = ThreadingHTTPServer((LOOPBACK, port), handler)
    server.daemon_threads = True

    def on_signal(_signum: int, _frame: object) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    if ready is not None:
        ready()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        backend.close()


# --- Running one as a process -----------------------------------------------------------------


def _answers(uri: str) -> bool:
    try:
        with urllib.request.urlopen(f"{uri}/v1/config", timeout=2):  # noqa: S310 - loopback
            return True
    except urllib.error.HTTPError:
        return True  # 401: it answers
    except OSError:
        return False


def stop(pid: int) -> None:
    """Stop a server by its pid (and its process group, its JVM with it): TERM, then KILL."""
    stop_group(pid)


def start(folder: Path, *, port: int | None = None, faults: bool = False) -> RestCatalog:
    """Start a server on ``folder`` (created if missing) in a process of its own, and wait
    until it answers."""
    folder.mkdir(parents=True, exist_ok=True)
    credential = f"spark-destination:{secrets.token_urlsafe(24)}"
    if not (folder / CREDENTIAL_FILE).is_file():
        write_credential(folder, credential)
    credential = (folder / CREDENTIAL_FILE).read_text().strip()
    port = port or free_port()
    command = [sys.executable, "-m", __name__, "--dir", str(folder), "--port", str(port), "--quiet"]
    if faults:
        command.append("--faults")
    log = folder / "rest_catalog.log"
    with log.open("ab") as out:
        # A session of its own, so stopping it by pid stops nothing of the caller's.
        process = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
            command, cwd=folder, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    uri = f"http://{LOOPBACK}:{port}"
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while not _answers(uri):
        if process.poll() is not None:
            raise ConfigurationError(
                f"the REST catalog server exited with {process.returncode} before it answered "
                f"on port {port}; see {log}"
            )
        if time.monotonic() > deadline:
            stop(process.pid)
            raise ConfigurationError(
                f"the REST catalog server did not answer on port {port}; see {log}"
            )
        time.sleep(0.2)
    return RestCatalog(
        uri=uri, warehouse=folder / "warehouse", pid=process.pid, log=log, credential=credential
    )


@contextlib.contextmanager
def rest_catalog(folder: Path, *, faults: bool = False) -> Iterator[RestCatalog]:
    """A server for the body; stopped by its pid however the body ends."""
    running = start(folder, faults=faults)
    try:
        yield running
    finally:
        stop(running.pid)


def token(catalog: RestCatalog) -> str:
    """A bearer token for ``catalog``'s own client (for tests that call it directly)."""
    client_id, _, secret = catalog.credential.partition(":")
    form = urllib.parse.urlencode(
        {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret}
    ).encode()
    with urllib.request.urlopen(f"{catalog.uri}/v1/oauth/tokens", form, timeout=10) as answer:  # noqa: S310
        return str(json.load(answer)["access_token"])


def inject_commit_unknown(catalog: RestCatalog, count: int = 1) -> None:
    """The next ``count`` table commits apply, then answer 504 (a server started with faults)."""
    request = urllib.request.Request(  # noqa: S310 - loopback
        f"{catalog.uri}{FAULTS_PATH}",
        data=json.dumps({"commit_unknown": count}).encode(),
        headers={"Authorization": f"Bearer {token(catalog)}"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310
        if answer.status != HTTPStatus.NO_CONTENT:
            raise ConfigurationError(f"the fault hook answered {answer.status}")


def destination_configuration(catalog: RestCatalog) -> Mapping[str, str]:
    """The destination's configuration keys for tables in ``catalog``."""
    return {
        "catalog_type": "rest",
        "catalog_uri": catalog.uri,
        "catalog_credential": catalog.credential,
        "warehouse": str(catalog.warehouse),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m spark_destination.local_services.rest_catalog",
        description="Run an Iceberg REST catalog (Iceberg's handlers over a Hadoop catalog in "
        "files in DIR/warehouse) in the foreground.",
    )
    parser.add_argument("--dir", required=True, type=Path, help="its warehouse and credential")
    parser.add_argument("--port", type=int, default=8181)
    parser.add_argument("--faults", action="store_true", help="enable the test fault hook")
    parser.add_argument("--quiet", action="store_true", help="no start-up message")
    args = parser.parse_args(argv)
    folder: Path = args.dir.resolve()

    def ready() -> None:
        if args.quiet:
            return
        print(
            f"Iceberg REST catalog at http://{LOOPBACK}:{args.port} (pid {os.getpid()}), "
            f"warehouse {folder / 'warehouse'}. The destination's flags:\n"
            f"  --catalog-type rest --catalog-uri http://{LOOPBACK}:{args.port} "
            f'--catalog-credential "$(cat {folder / CREDENTIAL_FILE})" '
            f"--warehouse {folder / 'warehouse'}\n"
            "Ctrl-C stops it.",
            flush=True,
        )

    serve(folder, args.port, faults=args.faults, ready=ready)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
