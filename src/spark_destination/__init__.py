"""spark-destination: a Fivetran v2 destination for Apache Iceberg through Apache Spark."""

from __future__ import annotations

__version__ = "0.1.0"
