"""The RPC steps one input file turns into (plain frozen dataclasses, testable without gRPC)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from spark_destination.core.model import SYNCED, FileParams, Table
from spark_destination.replay.client import TESTER_FILE_PARAMS
from spark_destination.server.proto.fivetran_sdk.v2 import destination_sdk_pb2 as pb


@dataclass(frozen=True, slots=True)
class DescribeStep:
    table: str

    @property
    def summary(self) -> str:
        return f"DescribeTable {self.table}"


@dataclass(frozen=True, slots=True)
class CreateStep:
    table: Table

    @property
    def summary(self) -> str:
        return f"CreateTable {self.table.name}"


@dataclass(frozen=True, slots=True)
class AlterStep:
    table: Table
    drop_columns: bool = False

    @property
    def summary(self) -> str:
        drop = " (drop_columns)" if self.drop_columns else ""
        return f"AlterTable {self.table.name}{drop}"


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteStep:
    table: Table
    replace_files: tuple[str, ...] = ()
    update_files: tuple[str, ...] = ()
    delete_files: tuple[str, ...] = ()
    # Never printed: keys must not end up in logs or reports.
    keys: Mapping[str, bytes] = field(default_factory=dict, repr=False)
    file_params: FileParams = TESTER_FILE_PARAMS

    @property
    def files(self) -> tuple[str, ...]:
        return self.replace_files + self.update_files + self.delete_files

    @property
    def summary(self) -> str:
        return (
            f"WriteBatch {self.table.name} (replace {len(self.replace_files)}, "
            f"update {len(self.update_files)}, delete {len(self.delete_files)})"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteHistoryStep:
    table: Table
    earliest_start_files: tuple[str, ...] = ()
    replace_files: tuple[str, ...] = ()
    update_files: tuple[str, ...] = ()
    delete_files: tuple[str, ...] = ()
    keys: Mapping[str, bytes] = field(default_factory=dict, repr=False)
    file_params: FileParams = TESTER_FILE_PARAMS

    @property
    def files(self) -> tuple[str, ...]:
        return (
            self.earliest_start_files + self.replace_files + self.update_files + self.delete_files
        )

    @property
    def summary(self) -> str:
        return (
            f"WriteHistoryBatch {self.table.name} (earliest {len(self.earliest_start_files)}, "
            f"replace {len(self.replace_files)}, update {len(self.update_files)}, "
            f"delete {len(self.delete_files)})"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TruncateStep:
    table: str
    utc_delete_before: datetime
    soft_deleted_column: str | None = None
    synced_column: str = SYNCED

    @property
    def summary(self) -> str:
        kind = "soft " if self.soft_deleted_column is not None else ""
        before = self.utc_delete_before.isoformat(timespec="milliseconds")
        return f"Truncate {self.table} ({kind}before {before})"


@dataclass(frozen=True, slots=True)
class MigrateStep:
    details: pb.MigrationDetails

    @property
    def summary(self) -> str:
        operation = self.details.WhichOneof("operation") or "no operation"
        what = operation
        if operation in ("drop", "copy", "rename", "add"):
            what += f".{getattr(self.details, operation).WhichOneof('entity')}"
        return f"Migrate {self.details.table} ({what})"


Step = (
    DescribeStep
    | CreateStep
    | AlterStep
    | WriteStep
    | WriteHistoryStep
    | TruncateStep
    | MigrateStep
)


def batch_files(steps: Iterable[Step]) -> list[str]:
    """Every batch file the steps refer to (for clean-up)."""
    return [f for s in steps if isinstance(s, WriteStep | WriteHistoryStep) for f in s.files]
