"""A destination tester's data folder, laid out as the tester's own: configuration.json beside
a few small input files (plus what the tester leaves alone)."""

from __future__ import annotations

import json
from pathlib import Path

from spark_destination.replay.data_folder import CONFIGURATION_FILE

CONFIGURATION = {"warehouse": "/lake", "catalog": "from_file", "region": "eu"}


def _table() -> dict[str, object]:
    return {"columns": {"id": "INT", "v": "STRING"}, "primary_key": ["id"]}


def make_data_folder(root: Path) -> Path:
    """The tester's data folder layout: configuration.json beside a few input files, written
    out of name order, with what the tester leaves alone (a sub-folder's files, a README)."""
    folder = root / "data"
    (folder / "more").mkdir(parents=True)
    inputs = {
        "schema_migrations_input_ddl.json": {"describe_table": ["t2"]},
        "input_2.json": {
            "create_table": {"t2": _table()},
            "ops": [{"upsert": {"t2": [{"id": 1, "v": "a"}]}}],
        },
        "input_10.json": {
            "create_table": {"t10": _table()},
            "ops": [{"upsert": {"t10": [{"id": 1, "v": "b"}]}}],
        },
    }
    for name, data in inputs.items():
        (folder / name).write_text(json.dumps(data), encoding="utf-8")
    (folder / CONFIGURATION_FILE).write_text(json.dumps(CONFIGURATION), encoding="utf-8")
    (folder / "more" / "nested.json").write_text("{}", encoding="utf-8")
    (folder / "README.md").write_text("notes", encoding="utf-8")
    return folder
