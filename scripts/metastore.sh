#!/usr/bin/env bash
# Run a Hive metastore (Hive 2.3.9 from pyspark's jars, on Derby in DIR) in the foreground,
# set as Iceberg needs (transaction tables, column changes allowed); Ctrl-C stops it.
#   scripts/metastore.sh --dir DIR [--port 9083]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/python -m spark_destination.local_services.metastore "$@"
