#!/usr/bin/env bash
# Install, then run the gRPC server on 127.0.0.1:50052 (local Spark + ./warehouse by default).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/spark-destination serve "$@"
