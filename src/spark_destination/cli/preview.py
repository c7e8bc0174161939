"""``spark-destination preview``: the SQL a request would run, without Spark."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def add_command(sub: Any) -> None:
    command = sub.add_parser("preview", help="print the SQL a request would run (no Spark)")
    command.add_argument(
        "request", help="request JSON file (see spark_destination.engine.request_json)"
    )
    command.add_argument(
        "--dialect",
        help="SQL dialect to render: spark_iceberg or spark_delta (what runs here for "
        "table_format iceberg or delta; default: the request configuration's table_format), "
        "or databricks_delta (Databricks SQL, rendered only)",
    )
    command.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spark_destination.dialects.registry import DEFAULT, dialect
    from spark_destination.engine.preview import preview
    from spark_destination.engine.request_json import parse_request
    from spark_destination.engine.table_format import configured_dialect

    data = json.loads(Path(args.request).read_text(encoding="utf-8"))
    if isinstance(data, dict) and data.get("request") == "maintain":
        from spark_destination.cli.maintain import preview_maintenance_json

        sys.stdout.write(preview_maintenance_json(data, dialect(args.dialect or DEFAULT.name)))
        return 0
    parsed = parse_request(data)
    chosen = dialect(args.dialect) if args.dialect else configured_dialect(parsed.config)
    sys.stdout.write(preview(parsed, chosen))
    return 0
