#!/usr/bin/env bash
# Install, lint, type-check, then run the fast pure tests and the Spark tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
.venv/bin/ruff check src tests scripts benchmarks main.py
.venv/bin/mypy
# Pure tests (no JVM): planner, renderer, golden SQL, protocol contract, batch files.
.venv/bin/python -m pytest -m "not spark" -q "$@"
# End-to-end tests on one shared local Spark session.
.venv/bin/python -m pytest -m spark -q "$@"
