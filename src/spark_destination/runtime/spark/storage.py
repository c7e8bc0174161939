"""Object storage: the settings that point Iceberg's FileIO at S3 (pure: no pyspark).

A catalog's tables on S3 are read and written through Iceberg's ``S3FileIO`` (AWS SDK v2, from
``iceberg-aws-bundle``), which takes its settings as catalog properties. ``S3Storage`` is the
one place they are made, from the configuration's ``s3_*`` keys:

- ``client.region`` always: the SDK otherwise looks the region up through its provider chain,
  which ends at the EC2 metadata service (169.254.169.254), and without it ``DROP TABLE …
  PURGE`` failed with "Unable to load region from any of the providers";
- ``s3.endpoint`` and path-style addressing for an S3-compatible store;
- static keys, or nothing (the SDK's default credential chain);
- bounded retries and timeouts, so a store that stops answering fails a request in a bounded
  time rather than after the SDK's own retries of every part of every file.

A REST catalog signed with SigV4 (S3 Tables, Glue's Iceberg endpoint, SeaweedFS's catalog)
takes the same region and keys (``sigv4_properties``). Delta's tables are read and written
through Hadoop's file systems, S3A for ``s3://`` and ``s3a://``, which take the same settings
as Hadoop properties (``hadoop_properties``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from spark_destination.core.config import S3Credentials
from spark_destination.core.errors import ConfigurationError

S3_FILE_IO: Final = "org.apache.iceberg.aws.s3.S3FileIO"
# The URI schemes S3FileIO reads (s3a and s3n are Hadoop's names for the same buckets).
S3_SCHEMES: Final = frozenset({"s3", "s3a", "s3n"})
# Retries of one S3 request (the SDK's adaptive backoff between them), and how long a
# connection and a read may take: a store that is down fails a file's write after about a
# minute, and Iceberg's own commit retries and the request's retry policy decide the rest.
S3_RETRIES: Final = 5
CONNECTION_TIMEOUT_MS: Final = 5_000
SOCKET_TIMEOUT_MS: Final = 30_000
# The Iceberg catalog properties set here; a spark_conf entry may not set them.
MANAGED_S3_PROPERTIES: Final = frozenset(
    {
        "io-impl",
        "client.region",
        "s3.endpoint",
        "s3.path-style-access",
        "s3.access-key-id",
        "s3.secret-access-key",
        "s3.retry.num-retries",
        "http-client.apache.connection-timeout-ms",
        "http-client.apache.socket-timeout-ms",
        "rest.auth.type",
        "rest.signing-region",
        "rest.signing-name",
        "rest.access-key-id",
        "rest.secret-access-key",
    }
)


# Hadoop's S3 file system, for ``s3://`` as well as its own ``s3a://`` (Iceberg writes
# ``s3://`` locations, and a Hive metastore or Delta reads them through Hadoop).
S3A_FILE_SYSTEM: Final = "org.apache.hadoop.fs.s3a.S3AFileSystem"
S3A_STATIC_KEYS: Final = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
# The Hadoop properties set here (``hadoop_properties``); a spark_conf entry may not set them.
MANAGED_S3A_PROPERTIES: Final = frozenset(
    {
        "fs.s3.impl",
        "fs.s3a.endpoint",
        "fs.s3a.endpoint.region",
        "fs.s3a.path.style.access",
        "fs.s3a.connection.ssl.enabled",
        "fs.s3a.aws.credentials.provider",
        "fs.s3a.access.key",
        "fs.s3a.secret.key",
        "fs.s3a.attempts.maximum",
        "fs.s3a.retry.limit",
        "fs.s3a.connection.establish.timeout",
        "fs.s3a.connection.timeout",
    }
)


def is_s3_location(location: str) -> bool:
    return urlsplit(location.strip()).scheme.lower() in S3_SCHEMES


@dataclass(frozen=True, slots=True, kw_only=True)
class S3Storage:
    """Where and how the destination reaches S3; the secret never shows in a repr."""

    region: str
    endpoint: str = ""
    credentials: S3Credentials = S3Credentials.KEYS
    access_key_id: str = ""
    secret_access_key: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        if not self.region:
            raise ConfigurationError(
                "storage s3 needs s3_region (the bucket's region, e.g. us-east-1; any value for "
                "a store without regions): it is never looked up"
            )
        if self.credentials is S3Credentials.KEYS:
            absent = [
                key
                for key, value in (
                    ("s3_access_key_id", self.access_key_id),
                    ("s3_secret_access_key", self.secret_access_key),
                )
                if not value
            ]
            if absent:
                raise ConfigurationError(
                    f"s3_credentials keys needs {' and '.join(absent)} (or s3_credentials "
                    "default_chain, for a destination running inside AWS)"
                )
        elif self.access_key_id or self.secret_access_key:
            raise ConfigurationError(
                "s3_access_key_id and s3_secret_access_key apply to s3_credentials keys, not "
                "default_chain"
            )

    def file_io_properties(self) -> tuple[tuple[str, str], ...]:
        """The catalog properties that make its FileIO this S3."""
        entries: list[tuple[str, str]] = [
            ("io-impl", S3_FILE_IO),
            ("client.region", self.region),
            ("s3.retry.num-retries", str(S3_RETRIES)),
            ("http-client.apache.connection-timeout-ms", str(CONNECTION_TIMEOUT_MS)),
            ("http-client.apache.socket-timeout-ms", str(SOCKET_TIMEOUT_MS)),
        ]
        if self.endpoint:
            entries += [("s3.endpoint", self.endpoint), ("s3.path-style-access", "true")]
        if self.credentials is S3Credentials.KEYS:
            entries += [
                ("s3.access-key-id", self.access_key_id),
                ("s3.secret-access-key", self.secret_access_key),
            ]
        return tuple(entries)

    def hadoop_properties(self) -> tuple[tuple[str, str], ...]:
        """The Hadoop properties that make S3A this S3, with the same region, keys, retries
        and timeouts as ``file_io_properties`` (the defaults in Hadoop 3.3.4's
        core-default.xml: 20 attempts per call inside 7 retries of each operation, and 200 s
        per read)."""
        entries: list[tuple[str, str]] = [
            ("fs.s3.impl", S3A_FILE_SYSTEM),
            ("fs.s3a.endpoint.region", self.region),
            ("fs.s3a.attempts.maximum", str(S3_RETRIES)),
            ("fs.s3a.retry.limit", str(S3_RETRIES)),
            ("fs.s3a.connection.establish.timeout", str(CONNECTION_TIMEOUT_MS)),
            ("fs.s3a.connection.timeout", str(SOCKET_TIMEOUT_MS)),
        ]
        if self.endpoint:
            entries += [("fs.s3a.endpoint", self.endpoint), ("fs.s3a.path.style.access", "true")]
            if urlsplit(self.endpoint).scheme.lower() == "http":
                entries.append(("fs.s3a.connection.ssl.enabled", "false"))
        if self.credentials is S3Credentials.KEYS:
            entries += [
                ("fs.s3a.aws.credentials.provider", S3A_STATIC_KEYS),
                ("fs.s3a.access.key", self.access_key_id),
                ("fs.s3a.secret.key", self.secret_access_key),
            ]
        return tuple(entries)

    def sigv4_properties(self, signing_name: str) -> tuple[tuple[str, str], ...]:
        """The properties that sign a REST catalog's requests with these credentials."""
        entries: list[tuple[str, str]] = [
            ("rest.auth.type", "sigv4"),
            ("rest.signing-region", self.region),
            ("rest.signing-name", signing_name),
        ]
        if self.credentials is S3Credentials.KEYS:
            entries += [
                ("rest.access-key-id", self.access_key_id),
                ("rest.secret-access-key", self.secret_access_key),
            ]
        return tuple(entries)

    def describe(self) -> str:
        """For messages: where, and how it signs (never the secret)."""
        where = self.endpoint or f"AWS S3 in {self.region}"
        how = (
            f"access key {self.access_key_id}"
            if self.credentials is S3Credentials.KEYS
            else "the default credential chain"
        )
        return f"{where} ({how})"
