"""What ``spark-destination`` sets in its process before gRPC and pyarrow load."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from spark_destination.cli.main import main


@pytest.fixture(autouse=True)
def _own_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # main() sets variables in os.environ: a copy keeps them out of the other tests' process.
    monkeypatch.setattr(os, "environ", {**os.environ})


def test_the_command_line_keeps_arrow_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(os.environ, "MIMALLOC_PURGE_DELAY", raising=False)
    with pytest.raises(SystemExit):
        main(["--help"])
    assert os.environ["MIMALLOC_PURGE_DELAY"] == "-1"


def test_an_operators_setting_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(os.environ, "MIMALLOC_PURGE_DELAY", "10")
    with pytest.raises(SystemExit):
        main(["--help"])
    assert os.environ["MIMALLOC_PURGE_DELAY"] == "10"


def test_pyarrow_loads_after_the_setting() -> None:
    # mimalloc reads its options when pyarrow loads: importing the command line must not load it.
    # Fivetran's entry point (main.py) goes through cli.fivetran.
    code = "import sys, spark_destination.cli.fivetran; print('pyarrow' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"
