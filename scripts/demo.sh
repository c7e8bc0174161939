#!/usr/bin/env bash
# Install, then replay the bundled sample sync through an embedded server (local Spark + local
# Iceberg warehouse in ./warehouse) and print the resulting tables.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/spark-destination demo "$@"
