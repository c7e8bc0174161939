#!/usr/bin/env bash
# Install, lint, type-check, then run the fast pure tests and the Spark tests (both write modes).
#
# Both write modes: the Spark tests run with merge mode as the server's default, then again
# with deferred mode as the default (SPARK_DESTINATION_WRITE_MODE=deferred, see
# tests/spark/conftest.py), so that both modes pass the whole suite on every run. The second
# pass runs only the tests the server's default mode reaches: it leaves out those that never
# reach the shared server, set their modes (they ran in both in the first pass) or run servers
# of their own (marker one_write_mode), and the Hive metastore and REST catalog variants: the
# catalog does not change which steps a request takes, and each catalog's own deferred tests
# ran in the first pass (pytest_collection_modifyitems). CI (.ci/run) runs this script and must
# stay under 45 minutes.
#
# scripts/test.sh --deferred [pytest args]: only the Spark tests, deferred mode the default.
set -euo pipefail
cd "$(dirname "$0")/.."
# The checks that decrypted rows and scratch files stay on the RAM-backed /dev/shm fail here,
# rather than skip, where /dev/shm is missing or too small (tests/support/ram_scratch.py): a
# skip would hide that they never ran. SPARK_DESTINATION_REQUIRE_SHM=0 lets them skip.
export SPARK_DESTINATION_REQUIRE_SHM="${SPARK_DESTINATION_REQUIRE_SHM:-1}"
scripts/bootstrap.sh
if [ "${1:-}" = "--deferred" ]; then
  shift
  SPARK_DESTINATION_WRITE_MODE=deferred exec .venv/bin/python -m pytest -m spark -q "$@"
fi
.venv/bin/ruff check src tests scripts benchmarks main.py
.venv/bin/ruff format --check src tests scripts benchmarks main.py
.venv/bin/mypy
# Pure tests (no JVM): planner, renderer, golden SQL, protocol contract, batch files.
.venv/bin/python -m pytest -m "not spark" -q "$@"
# End-to-end tests on one shared local Spark session.
.venv/bin/python -m pytest -m spark -q "$@"
# The whole Spark suite again, deferred mode the default (see the top).
SPARK_DESTINATION_WRITE_MODE=deferred .venv/bin/python -m pytest -m spark -q "$@"
