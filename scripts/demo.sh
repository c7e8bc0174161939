#!/usr/bin/env bash
# Install, then replay the bundled sample sync through an embedded server (local Spark + local
# Iceberg warehouse in ./warehouse) and print the resulting tables.
#   scripts/demo.sh --s3 DIR   the same on S3: a SeaweedFS server (S3 and its Iceberg REST
#                              catalog) on loopback, its data and keys kept in DIR
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/spark-destination demo "$@"
