#!/usr/bin/env bash
# Run an Iceberg REST catalog (Iceberg's own handlers over a Hadoop catalog in DIR/warehouse,
# OAuth2 client credentials in DIR/credential) in the foreground; Ctrl-C stops it.
#   scripts/rest_catalog.sh --dir DIR [--port 8181]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/python -m spark_destination.local_services.rest_catalog "$@"
