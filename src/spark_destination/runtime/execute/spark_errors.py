"""Spark's failures as one line the user and the logs may see, never a row value, and as the
error class that says whether Fivetran should retry (``spark_failure``, ``gave_up_error``).

Spark's messages for bad values quote the value (``The value 'abc' of the type ...``), and a
message that prints part of a plan can show bound keys as bare literals, so only the error class
and the first sentence are kept, with quoted text (and, where values were bound, every number)
masked.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Final, assert_never

from spark_destination.core.errors import (
    CommitRaceLostError,
    ExecutionError,
    ServiceUnavailableError,
)
from spark_destination.runtime.execute import transient
from spark_destination.runtime.execute.retry_policy import Trouble

# A Spark setting's name is not a value: Spark quotes it in its advice ("This behavior can be
# adjusted by setting 'spark.sql.debug.maxToStringFields'"), so quoted setting names are kept.
# The JVM's log lines mask the same way: runtime/spark/log4j2.properties holds this pattern too
# (a test checks), written with [.] because a properties file eats backslashes.
SETTING_NAME: Final = r"spark(?:[.][A-Za-z0-9_-]+)+"
# At each position: a quoted setting name (kept), other quoted text (masked), or a number, date
# or time as Spark prints a literal unquoted (``42``, ``-1.5E3``, ``2024-01-31``).
_TOKEN = re.compile(rf"(?P<setting>'{SETTING_NAME}')|(?P<quoted>'[^']*')|(?P<number>\d[\w.:+\-]*)")


def mask_values(text: str, *, numbers: bool = False) -> str:
    """``text`` with quoted values (and, if asked, unquoted numbers) masked; setting names stay."""

    def masked(match: re.Match[str]) -> str:
        if match["setting"]:
            return match["setting"]
        if match["quoted"]:
            return "'…'"
        return "…" if numbers else match["number"]

    return _TOKEN.sub(masked, text)


def describe_spark_error(exc: BaseException, *, values_bound: bool = False) -> str:
    """A one-line, value-free account of a Spark failure.

    Spark's messages for bad values quote the value (``The value 'abc' of the type ...``), so
    only the error class and Spark's first sentence with quoted literals masked are kept (quoted
    setting names stay: they are Spark's advice, not data). When
    the statement had values bound to it (a small batch's keys), a message that prints part of
    the plan could show them as unquoted literals: every number is masked too.
    """
    text = str(exc)
    if hasattr(exc, "java_exception"):
        text = str(exc.java_exception)  # a Py4JJavaError's str() includes the whole JVM trace
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return mask_values(first, numbers=values_bound)[:500]


def spark_failure(message: str, exc: BaseException) -> ExecutionError:
    """The error for a Spark or catalog failure described by ``message``: one Fivetran retries
    (``ServiceUnavailableError``) when a service it needed did not answer, else a task's."""
    if transient.is_unreachable(exc):
        return ServiceUnavailableError(
            f"{message} (the catalog or the object store did not answer; Fivetran retries)"
        )
    return ExecutionError(message)


def gave_up_error(what: str, gave_up: transient.GaveUp, described: str) -> ExecutionError:
    """The error for a statement still failing transiently when the request's retry budget
    was spent: Fivetran retries the request later."""
    times = "once" if gave_up.retries == 1 else f"{gave_up.retries} times"
    spent = f"retried {times} in {gave_up.seconds:.0f} s"
    match gave_up.trouble:
        case Trouble.RACE:
            return CommitRaceLostError(
                f"{what} failed transiently on every attempt (a commit race lost to other "
                f"writers, or shuffle data lost with an executor; {spent}): {described}"
            )
        case Trouble.UNAVAILABLE:
            return ServiceUnavailableError(
                f"{what} failed: the catalog or the object store did not answer ({spent}): "
                f"{described}"
            )
        case _:
            assert_never(gave_up.trouble)


# What a shared catalog's refusal means, and the setting that ends it. A Hive metastore whose
# schema was made by datanucleus (``datanucleus.schema.autoCreateAll``) has no transaction
# tables, so it cannot create the lock Iceberg takes for every commit; Iceberg then says only
# that the lock failed, or, for a new table, that the table "already exists".
LOCK_HINT: Final = (
    "the catalog refused Iceberg's commit lock: on a Hive metastore this means its transaction "
    "tables (HIVE_LOCKS and the others) are missing, as in a schema created by "
    "datanucleus.schema.autoCreateAll; create the metastore schema with Hive's schematool "
    "-initSchema (or run Hive's TxnDbUtil.prepDb against its database)"
)
COLUMN_TYPE_HINT: Final = (
    "the Hive metastore refused the new column layout: set "
    "hive.metastore.disallow.incompatible.col.type.changes=false in its hive-site.xml "
    "(Iceberg keeps the Hive schema in step with its own, and dropping a column moves the "
    "columns after it)"
)
# A REST catalog answered 401 (for the token request or a call): the credential is wrong. The
# message never quotes the credential, only the key that holds it.
CREDENTIAL_HINT: Final = (
    "the REST catalog refused the OAuth2 credential: check catalog_credential "
    "('client_id:client_secret' of a client the catalog knows)"
)
FORBIDDEN_HINT: Final = (
    "the REST catalog refused the call for the client of catalog_credential: grant that "
    "client the privileges to create, alter and drop tables in the warehouse"
)
# A REST catalog signed with SigV4 refused the signature: AWS's own wording (S3, S3 Tables,
# Glue and SeaweedFS answer with it) says which of the two keys is wrong.
SIGNATURE_HINT: Final = (
    "the catalog refused the request's signature: the secret access key does not match the "
    "access key id (check s3_secret_access_key)"
)
ACCESS_KEY_HINT: Final = "the catalog does not know the access key id (check s3_access_key_id)"
_BAD_SIGNATURE: Final = "signature we calculated does not match"
_UNKNOWN_KEY: Final = "access key id you provided does not exist"
NOT_AUTHORIZED: Final = "org.apache.iceberg.exceptions.NotAuthorizedException"
FORBIDDEN: Final = "org.apache.iceberg.exceptions.ForbiddenException"
_INCOMPATIBLE_COLUMNS: Final = "types incompatible with the existing columns"
HIVE_LOCK_EXCEPTION: Final = "org.apache.iceberg.hive.LockException"
METASTORE_REFUSAL: Final = "org.apache.hadoop.hive.metastore.api.InvalidOperationException"


def catalog_hint(classes: Collection[str], text: str) -> str | None:
    """What a catalog's refusal means and the setting to change, or None."""
    if HIVE_LOCK_EXCEPTION in classes:
        return LOCK_HINT
    if NOT_AUTHORIZED in classes or FORBIDDEN in classes:
        lowered = text.lower()
        if _BAD_SIGNATURE in lowered:
            return SIGNATURE_HINT
        if _UNKNOWN_KEY in lowered:
            return ACCESS_KEY_HINT
    if NOT_AUTHORIZED in classes:
        return CREDENTIAL_HINT
    if FORBIDDEN in classes:
        return FORBIDDEN_HINT
    if _INCOMPATIBLE_COLUMNS in text:
        return COLUMN_TYPE_HINT
    return None
