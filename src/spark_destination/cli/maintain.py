"""``spark-destination maintain``: table maintenance from the command line, and its preview.

``maintain SCHEMA TABLE…`` compacts data and delete files, expires snapshots older than the
retention and removes orphan files, one table after the other (see ``planner.maintenance``).
``--preview`` prints the statements without starting Spark (``--dialect databricks_delta``: the
Delta commands, clustered by the ``--key`` columns); ``preview FILE.json`` does the same for
``{"request": "maintain", "schema": …, "table": …, "retention_hours": …, "key": […]}``.
Run it while the server is stopped, or from the server's own automatic mode: a Hadoop catalog
has one writer process per warehouse.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from spark_destination.cli.flags import add_config_flags, config_defaults, engine_for
from spark_destination.core.config import Storage, parse_config
from spark_destination.core.errors import InvalidRequestError
from spark_destination.dialects.base import Dialect
from spark_destination.dialects.registry import DEFAULT
from spark_destination.dialects.render import render_plan
from spark_destination.engine.preview import checked, format_statements
from spark_destination.planner.maintenance import MaintenancePolicy, plan_maintenance
from spark_destination.planner.tables import table_ref


def _policy(
    configuration: Mapping[str, str], retention_hours: float | None, orphans: bool
) -> MaintenancePolicy:
    config = parse_config(configuration)
    hours = config.snapshot_retention_hours if retention_hours is None else retention_hours
    return MaintenancePolicy(
        retention=timedelta(hours=hours),
        remove_orphans=orphans,
        prefix_listing=config.storage is Storage.S3,
    )


def preview_maintenance(
    configuration: Mapping[str, str],
    schema: str,
    tables: list[str],
    policy: MaintenancePolicy,
    now: datetime,
    dialect: Dialect = DEFAULT,
    key: tuple[str, ...] = (),
) -> str:
    """The statements ``maintain`` would run; ``key``: the tables' primary key (read from the
    table when the command runs; here, given)."""
    config = parse_config(configuration)
    target = dialect.for_catalog(config.catalog_type)  # names as the catalog takes them
    parts = []
    for name in tables:
        ref = table_ref(config.catalog, schema, name, target=target)
        plan = plan_maintenance(ref, policy, now=now, target=target, key=key)
        parts.append(format_statements(checked(render_plan(plan, dialect), dialect)))
    return "\n".join(parts)


def _timestamp(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidRequestError(f"'now' {text!r} is not an ISO-8601 timestamp") from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def preview_maintenance_json(data: Mapping[str, Any], dialect: Dialect = DEFAULT) -> str:
    configuration = {str(k): str(v) for k, v in dict(data.get("configuration", {})).items()}
    table = data.get("table")
    if not isinstance(table, str) or not isinstance(data.get("schema"), str):
        raise InvalidRequestError("a maintain request needs 'schema' and 'table' names")
    hours = data.get("retention_hours")
    policy = _policy(configuration, None if hours is None else float(hours),
                     bool(data.get("remove_orphan_files", True)))  # fmt: skip
    now = _timestamp(str(data["now"])) if "now" in data else datetime.now(UTC)
    key = data.get("key", [])
    if not isinstance(key, list) or not all(isinstance(k, str) for k in key):
        raise InvalidRequestError("a maintain request's 'key' is a list of column names")
    schema = str(data["schema"])
    return preview_maintenance(configuration, schema, [table], policy, now, dialect, tuple(key))


def add_command(sub: Any) -> None:
    command = sub.add_parser(
        "maintain", help="compact files, expire snapshots and remove orphan files of tables"
    )
    command.add_argument("schema")
    command.add_argument("tables", nargs="+", metavar="table")
    command.add_argument(
        "--retention-hours",
        type=float,
        help="expire snapshots older than this (default: the snapshot_retention_hours key)",
    )
    command.add_argument(
        "--no-orphans", action="store_true", help="skip remove_orphan_files (it lists every file)"
    )
    command.add_argument("--preview", action="store_true", help="print the SQL; no Spark")
    command.add_argument(
        "--dialect",
        default=DEFAULT.name,
        help="SQL dialect: spark_iceberg (default; runs here) or databricks_delta (--preview)",
    )
    command.add_argument(
        "--key",
        action="append",
        default=[],
        metavar="COLUMN",
        help="--preview: a primary-key column (repeat; Delta's OPTIMIZE clusters by it)",
    )
    add_config_flags(command)
    command.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    configuration = config_defaults(args)
    policy = _policy(configuration, args.retention_hours, not args.no_orphans)
    if args.preview:
        from spark_destination.dialects.registry import dialect

        text = preview_maintenance(
            configuration,
            args.schema,
            args.tables,
            policy,
            datetime.now(UTC),
            dialect(args.dialect),
            tuple(args.key),
        )
        print(text, end="")
        return 0
    from spark_destination.server import logs

    logs.configure()
    engine = engine_for(args)
    for name in args.tables:
        report = engine.maintain(configuration, args.schema, name, policy=policy)
        print(report.text())
    return 0
