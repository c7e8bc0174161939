#!/usr/bin/env bash
# Freeze main.py with the pinned PyInstaller (requirements.lock), as Fivetran's build does, then
# optionally check the program on a bare environment.
#
#   scripts/freeze.sh            one-file dist/main (what Fivetran ships; ~500 MB, slower start)
#   scripts/freeze.sh --onedir   one-folder dist/main/main (faster to build and to start)
#   add --smoke                  then start it under `env -i` (no Python, no venv, no Java on
#                                PATH), replay the bundled samples against it, stop it (SIGTERM)
#
# The bundle's contents come from the package's own PyInstaller hook
# (src/spark_destination/_pyinstaller), so a plain `pyinstaller main.py` collects the same.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=--onefile
smoke=0
for arg in "$@"; do
  case "$arg" in
    --onedir) mode=--onedir ;;
    --onefile) mode=--onefile ;;
    --smoke) smoke=1 ;;
    *) echo "usage: scripts/freeze.sh [--onedir|--onefile] [--smoke]" >&2; exit 2 ;;
  esac
done
scripts/bootstrap.sh
rm -rf dist/main build/main
started=$(date +%s)
.venv/bin/pyinstaller --noconfirm --clean --log-level WARN "$mode" --name main \
  --distpath dist --workpath build --specpath build main.py
echo "freeze: built in $(( $(date +%s) - started )) s; size $(du -sh dist/main | cut -f1)"
if [ "$smoke" = 1 ]; then
  binary=dist/main
  [ -d dist/main ] && binary=dist/main/main
  exec .venv/bin/python scripts/smoke_frozen.py "$binary"
fi
