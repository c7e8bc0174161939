"""What ``spark-destination`` sets in its process before gRPC and pyarrow load."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from spark_destination.cli.main import main


def test_the_command_line_keeps_arrow_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MIMALLOC_PURGE_DELAY", raising=False)
    with pytest.raises(SystemExit):
        main(["--help"])
    assert os.environ["MIMALLOC_PURGE_DELAY"] == "-1"


def test_an_operators_setting_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIMALLOC_PURGE_DELAY", "10")
    with pytest.raises(SystemExit):
        main(["--help"])
    assert os.environ["MIMALLOC_PURGE_DELAY"] == "10"


def test_pyarrow_loads_after_the_setting() -> None:
    # mimalloc reads its options when pyarrow loads: importing the command line must not load it.
    code = "import sys, spark_destination.cli.main; print('pyarrow' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"
