"""The setup test's probe of object storage: write, read, list and delete one object.

A sync on S3 needs ``s3:PutObject``, ``s3:GetObject``, ``s3:ListBucket`` (maintenance lists a
table's location) and ``s3:DeleteObject`` (failed writes, expired snapshots) under the
warehouse. The probe does each once, on an object of its own (``PROBE_FOLDER``), through a
FileIO of the catalog's settings (Iceberg's ``S3FileIO``, the client every sync uses) but with
no retries and short timeouts, so a wrong setting is named within seconds: a wrong secret
(the key field, never the secret), an unknown access key, an unknown bucket, a bucket in
another region, an endpoint that does not answer, or the action a missing permission refuses.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from spark_destination.core.errors import ConfigurationError
from spark_destination.core.names import OWN_PREFIX
from spark_destination.runtime.spark.storage import S3_FILE_IO, S3Storage

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

PROBE_FOLDER: Final = OWN_PREFIX + "probe"
PROBE_BYTES: Final = b"spark-destination storage probe\n"
# The probe's client: no retries, short timeouts (the setup test answers within seconds).
_PROBE_OVERRIDES: Final = (
    ("s3.retry.num-retries", "0"),
    ("http-client.apache.connection-timeout-ms", "3000"),
    ("http-client.apache.socket-timeout-ms", "10000"),
)


@dataclass(frozen=True, slots=True)
class _Step:
    action: str  # the S3 permission it needs
    what: str


WRITE: Final = _Step("s3:PutObject", "write an object")
READ: Final = _Step("s3:GetObject", "read it back")
LIST: Final = _Step("s3:ListBucket", "list the prefix")
DELETE: Final = _Step("s3:DeleteObject", "delete it")


def probe_storage(session: SparkSession, location: str, s3: S3Storage, folder: str) -> None:
    """Write, read, list and delete a probe object in ``folder`` under ``location``; a
    ``ConfigurationError`` naming what is wrong (never a secret) if a step fails.

    ``folder``: ``PROBE_FOLDER`` under a warehouse prefix; ``data`` under a table's location
    (a table bucket, as S3 Tables and SeaweedFS keep them, takes objects only under a table's
    ``data`` and ``metadata``)."""
    jvm = session.sparkContext._jvm
    assert jvm is not None
    properties = jvm.java.util.HashMap()
    for key, value in (*s3.file_io_properties(), *_PROBE_OVERRIDES):
        properties.put(key, value)
    io = jvm.org.apache.iceberg.CatalogUtil.loadFileIO(S3_FILE_IO, properties, None)
    prefix = f"{location.rstrip('/')}/{folder}/"
    path = f"{prefix}{PROBE_FOLDER}-{uuid.uuid4().hex}"
    try:
        _run(WRITE, location, s3, lambda: _write(io, path))
        got = _run(READ, location, s3, lambda: _read(io, path))
        if got != PROBE_BYTES:
            raise ConfigurationError(
                f"the object the setup test wrote under {location} read back with other bytes "
                f"({len(got)} of {len(PROBE_BYTES)}): the store does not keep what it is given"
            )
        listed = _run(LIST, location, s3, lambda: _listed(io, prefix))
        if path not in listed:
            raise ConfigurationError(
                f"the object the setup test wrote under {location} is missing from a listing "
                f"of its prefix: maintenance could not see the table's files"
            )
        _run(DELETE, location, s3, lambda: io.deleteFile(path))
    finally:
        io.close()


def _write(io: Any, path: str) -> None:
    stream = io.newOutputFile(path).createOrOverwrite()
    try:
        stream.write(bytearray(PROBE_BYTES))
    finally:
        stream.close()  # the upload happens here


def _read(io: Any, path: str) -> bytes:
    stream = io.newInputFile(path).newStream()
    try:
        return bytes(stream.readAllBytes())
    finally:
        stream.close()


def _listed(io: Any, prefix: str) -> set[str]:
    found: set[str] = set()
    iterator = io.listPrefix(prefix).iterator()
    while iterator.hasNext():
        found.add(str(iterator.next().location()))
    return found


def _run(step: _Step, location: str, s3: S3Storage, call: Any) -> Any:
    from py4j.protocol import Py4JJavaError

    try:
        return call()
    except Py4JJavaError as exc:
        raise ConfigurationError(
            f"the setup test could not {step.what} under {location} on {s3.describe()}: "
            + explain(exc.java_exception, step, location, s3)
        ) from None


def _classes(error: Any) -> list[str]:
    """The names of ``error``'s class and its superclasses."""
    names, klass = [], error.getClass()
    while klass is not None:
        names.append(str(klass.getName()))
        klass = klass.getSuperclass()
    return names


def _chain(error: Any) -> list[Any]:
    chain: list[Any] = []
    while error is not None and len(chain) < 10:
        chain.append(error)
        error = error.getCause()
    return chain


def explain(error: Any, step: _Step, location: str, s3: S3Storage) -> str:
    """What an S3 failure means for the user, from the AWS SDK's exception (never the
    secret, never the raw message, which may quote request details)."""
    for item in _chain(error):
        if any(name.endswith(".AwsServiceException") for name in _classes(item)):
            details = item.awsErrorDetails()
            code = str(details.errorCode()) if details is not None else ""
            return _service_error(code, int(item.statusCode()), step, location)
    for item in _chain(error):
        if "AccessDenied" in str(item.getClass().getName()):
            return _service_error("AccessDenied", 403, step, location)
    for item in _chain(error):
        text = str(item.toString())
        if "Unable to execute HTTP request" in text or "Connect" in text or "timed out" in text:
            where = s3.endpoint or f"AWS's endpoint for {s3.region}"
            return f"the S3 endpoint {where} does not answer (check s3_endpoint and the network)"
    # Unknown: the exception's class only (its message may quote request details).
    return f"{error.getClass().getSimpleName()} (see the destination's log)"


def _service_error(code: str, status: int, step: _Step, location: str) -> str:
    match code:
        case "SignatureDoesNotMatch":
            return (
                "the secret access key does not match the access key id (check "
                "s3_secret_access_key)"
            )
        case "InvalidAccessKeyId":
            return "S3 does not know this access key id (check s3_access_key_id)"
        case "NoSuchBucket":
            return f"the bucket of {location} does not exist (check warehouse)"
        case (
            "PermanentRedirect"
            | "AuthorizationHeaderMalformed"
            | "IllegalLocationConstraintException"
        ):
            return "the bucket is in another region than s3_region (check s3_region)"
        case "AccessDenied" | "AllAccessDisabled":
            return f"the credentials are not allowed to {step.what} ({step.action} on {location})"
        case "ExpiredToken" | "InvalidToken" | "TokenRefreshRequired":
            return "the credentials have expired (check the credential chain's session token)"
    if status == 301:
        return "the bucket is in another region than s3_region (check s3_region)"
    if status == 403:
        return f"access denied ({step.action} on {location})"
    return f"S3 answered {status} {code or 'without an error code'}"
