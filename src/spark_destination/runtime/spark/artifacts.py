"""Every jar the destination runs, pinned: coordinates, SHA-256 and size (the one home).

The jars come from the projects that make them (Apache Iceberg, Apache Hadoop, Delta Lake), as
published to Maven Central, at versions that match pyspark 3.5.9 (Spark 3.5, Scala 2.12,
Hadoop 3.3.4). ``jar_install`` fetches them once, at install, and checks each against its
SHA-256 here; ``jars`` finds them when Spark starts and never fetches anything.

The artifacts come in groups, by what needs them:

- ``iceberg``: Iceberg's Spark runtime. It shades its own Jackson and HttpClient 5, so every
  catalog type (Hadoop, Hive, REST) runs on it alone;
- ``s3``: Iceberg's AWS bundle (``S3FileIO``, SigV4 signing for REST catalogs, Glue), at the
  runtime's version;
- ``delta``: Delta Lake's Spark jar and its storage layer (Delta 3.3 needs Spark 3.5.3 or
  later; its ANTLR runtime, 4.9.3, is pyspark's own);
- ``s3a``: Hadoop's S3A file system with the AWS SDK it was built against (1.12.262 for Hadoop
  3.3.4). Delta reaches S3 through it (Iceberg through S3FileIO), and the Hive metastore that
  ``local_services`` runs needs it, because a metastore checks and creates table folders
  through Hadoop's file systems. At 282 MB it is not installed unasked nor frozen
  (``DESTINATION_GROUPS``): a JVM for Delta on S3 asks for it by name.

Iceberg 1.11.0 is the newest release for which the runtime and the AWS bundle
is served at one version (the AWS bundle 1.10.2 is not): a bundle must match the runtime's
version, its classes are compiled against that Iceberg. Changing a version means changing its
hash and size here, and running ``spark-destination install-jars`` again.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final


class JarGroup(enum.StrEnum):
    """What a set of jars is for (see the module docstring)."""

    ICEBERG = "iceberg"
    S3 = "s3"
    DELTA = "delta"
    S3A = "s3a"


@dataclass(frozen=True, slots=True, kw_only=True)
class Artifact:
    """One pinned jar on Maven Central."""

    group_id: str
    artifact_id: str
    version: str
    sha256: str
    size: int
    jar_group: JarGroup

    @property
    def coordinate(self) -> str:
        """``group:artifact:version``, as ``spark.jars.packages`` and Maven name it."""
        return f"{self.group_id}:{self.artifact_id}:{self.version}"

    @property
    def file_name(self) -> str:
        return f"{self.artifact_id}-{self.version}.jar"


ICEBERG_VERSION: Final = "1.11.0"
# 3.3.3, not 3.3.2: Spark 3.5.6 made replacing a table (CREATE OR REPLACE TABLE … AS SELECT,
# the rewrite of a type change) check that the staged table can truncate, and delta-spark 3.3.2
# on pyspark 3.5.9 failed it ("does not support truncate in batch mode"); 3.3.3 passes.
DELTA_VERSION: Final = "3.3.3"
# pyspark 3.5.9's Hadoop client, and the AWS SDK v1 bundle hadoop-aws 3.3.4 was built with.
HADOOP_VERSION: Final = "3.3.4"
AWS_SDK_V1_VERSION: Final = "1.12.262"

ICEBERG_RUNTIME: Final = Artifact(
    group_id="org.apache.iceberg",
    # The Scala 2.12 build: pyspark 3.5 from PyPI is Scala 2.12.
    artifact_id="iceberg-spark-runtime-3.5_2.12",
    version=ICEBERG_VERSION,
    sha256="94b8e36fc329f0293d44ba9e01b784a56e9501affec1842d898144c51f6e486a",
    size=47_964_645,
    jar_group=JarGroup.ICEBERG,
)

ARTIFACTS: Final[tuple[Artifact, ...]] = (
    ICEBERG_RUNTIME,
    Artifact(
        group_id="org.apache.iceberg",
        artifact_id="iceberg-aws-bundle",
        version=ICEBERG_VERSION,
        sha256="38f01da7e96850cdd05e6616d758b77b43314b712a8808e3f9a824d56976162f",
        size=63_613_165,
        jar_group=JarGroup.S3,
    ),
    Artifact(
        group_id="io.delta",
        artifact_id="delta-spark_2.12",
        version=DELTA_VERSION,
        sha256="4912bf902a1c453aba3bd838ff212dedd357155212f9bb37a6b47d97f2827ebc",
        size=7_123_349,
        jar_group=JarGroup.DELTA,
    ),
    Artifact(
        group_id="io.delta",
        artifact_id="delta-storage",
        version=DELTA_VERSION,
        sha256="45ad193053fd30cebe6d9ab1889873cde39b223a0f210e00ebee8b6642476901",
        size=32_289,
        jar_group=JarGroup.DELTA,
    ),
    Artifact(
        group_id="org.apache.hadoop",
        artifact_id="hadoop-aws",
        version=HADOOP_VERSION,
        sha256="53f9ae03c681a30a50aa17524bd9790ab596b28481858e54efd989a826ed3a4a",
        size=962_685,
        jar_group=JarGroup.S3A,
    ),
    Artifact(
        group_id="com.amazonaws",
        artifact_id="aws-java-sdk-bundle",
        version=AWS_SDK_V1_VERSION,
        sha256="873fe7cf495126619997bec21c44de5d992544aea7e632fdc77adb1a0915bae5",
        size=280_645_251,
        jar_group=JarGroup.S3A,
    ),
)

# What the destination process runs unasked (and a frozen build carries); ``s3a`` only for
# Delta on S3, and for the local metastore.
DESTINATION_GROUPS: Final = frozenset({JarGroup.ICEBERG, JarGroup.S3, JarGroup.DELTA})


def artifacts_of(groups: frozenset[JarGroup] | set[JarGroup]) -> tuple[Artifact, ...]:
    """The pinned artifacts of ``groups``, in ``ARTIFACTS`` order."""
    return tuple(artifact for artifact in ARTIFACTS if artifact.jar_group in groups)
