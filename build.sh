#!/usr/bin/env bash
# Fivetran's build step (reference §1): install the pinned runtime set, generate the gRPC stubs
# from the project's own proto/ (no download: this repository carries the .proto files),
# install the package, then the JVM's pinned jars (checked by SHA-256, cached in
# $SPARK_DESTINATION_CACHE or ~/.cache/spark-destination, where a frozen build collects them).
# Installs into the Python that runs it ($PYTHON, else python3): run it in a virtualenv or a
# build container. Afterwards: python main.py --port 50052.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${PYTHON:-python3}"
"$PYTHON" -m pip install --quiet -r requirements.txt
"$PYTHON" scripts/generate_protos.py
# Not editable: a frozen build (PyInstaller) collects the package from site-packages.
"$PYTHON" -m pip install --quiet --no-deps .
"$PYTHON" -m spark_destination.cli install-jars
