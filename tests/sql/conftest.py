"""Golden SQL snapshots: one pretty-printed ``.sql`` file per operation and dialect.

Layout: ``snapshots/<operation>/<dialect>.sql`` at the repository root, so a reviewer reads
each statement as a plain SQL file in diffs. Update with ``pytest --snapshot-update``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation
from syrupy.types import SnapshotIndex

SNAPSHOT_ROOT = Path(__file__).resolve().parents[2] / "snapshots"
_CASE = re.compile(r"\[(?P<case>[^\]-]+)-(?P<dialect>[^\]]+)\]$")


def _case(test_location: PyTestLocation) -> tuple[str, str]:
    match = _CASE.search(test_location.testname)
    if match is None:
        raise ValueError(
            f"snapshot tests must be parametrized as [case-dialect]: {test_location.testname}"
        )
    return match["case"], match["dialect"]


class SqlSnapshotExtension(SingleFileSnapshotExtension):
    file_extension = "sql"
    _write_mode = WriteMode.TEXT

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(SNAPSHOT_ROOT / _case(test_location)[0])

    @classmethod
    def discovery_dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(SNAPSHOT_ROOT)

    @classmethod
    def get_file_basename(cls, *, test_location: PyTestLocation, index: SnapshotIndex) -> str:
        return _case(test_location)[1]

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: SnapshotIndex = 0) -> str:
        return _case(test_location)[1]


@pytest.fixture
def sql_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(SqlSnapshotExtension)
