#!/usr/bin/env bash
# Install, lint, type-check, then run the fast pure tests and the Spark tests.
#
# scripts/test.sh --deferred [pytest args]: only the Spark tests, with deferred write mode as
# the server's default (SPARK_DESTINATION_WRITE_MODE=deferred, see tests/spark/conftest.py).
# CI does not run it (the suite would take twice as long); the modules that parametrize both
# modes run them on every run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
if [ "${1:-}" = "--deferred" ]; then
  shift
  SPARK_DESTINATION_WRITE_MODE=deferred exec .venv/bin/python -m pytest -m spark -q "$@"
fi
.venv/bin/ruff check src tests scripts benchmarks main.py
.venv/bin/mypy
# Pure tests (no JVM): planner, renderer, golden SQL, protocol contract, batch files.
.venv/bin/python -m pytest -m "not spark" -q "$@"
# End-to-end tests on one shared local Spark session.
.venv/bin/python -m pytest -m spark -q "$@"
