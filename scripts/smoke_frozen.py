"""Smoke-test a frozen destination on a bare environment and print its start-up figures.

Usage: ``python scripts/smoke_frozen.py dist/main`` (or ``dist/main/main`` for a one-folder
build). The program runs as under ``env -i``: only ``HOME``, ``TMPDIR`` and a ``PATH`` of
symlinks to the system's tools without any ``python*``, ``pip*`` or ``java*``. The bundled
samples are replayed against it through this (virtualenv) Python's gRPC client, as the tester
would; every stdout line must be a Fivetran JSON log line; SIGTERM must stop it cleanly.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLES = REPO_ROOT / "src" / "spark_destination" / "samples"
HIDDEN_PREFIXES = ("python", "pip", "java", "jshell", "jar")
START_TIMEOUT = 180.0
REPLAY_TIMEOUT = 900.0


def bare_path(folder: Path) -> str:
    """A PATH folder with every system tool except Python and Java."""
    folder.mkdir()
    for system in (Path("/usr/local/bin"), Path("/usr/bin"), Path("/bin")):
        if not system.is_dir():
            continue
        for tool in system.iterdir():
            link = folder / tool.name
            if tool.name.startswith(HIDDEN_PREFIXES) or link.exists():
                continue
            link.symlink_to(tool)
    return str(folder)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main(argv: list[str]) -> int:
    binary = Path(argv[1]).resolve()
    with tempfile.TemporaryDirectory(prefix="smoke-frozen-") as scratch:
        root = Path(scratch)
        (root / "home").mkdir()
        (root / "tmp").mkdir()
        env = {
            "HOME": str(root / "home"),
            "TMPDIR": str(root / "tmp"),
            "PATH": bare_path(root / "bin"),
        }
        port = free_port()
        lines: list[str] = []
        ready = threading.Event()
        started = time.monotonic()
        process = subprocess.Popen(
            [str(binary), "--port", str(port), "--warehouse", str(root / "warehouse")],
            env=env,
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                lines.append(line.rstrip("\n"))
                if "Spark is ready" in line:
                    ready.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        grpc_seconds = wait_for_grpc(port, started)
        if not ready.wait(START_TIMEOUT):
            process.kill()
            print("smoke: Spark did not start; stdout:\n" + "\n".join(lines[-20:]))
            return 1
        spark_seconds = time.monotonic() - started
        replay = subprocess.run(
            [
                str(REPO_ROOT / ".venv" / "bin" / "spark-destination"),
                "replay",
                str(SAMPLES),
                "--address",
                f"127.0.0.1:{port}",
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=REPLAY_TIMEOUT,
        )
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=120)
        reader.join(timeout=10)
        leftovers = sorted(p.name for p in (root / "tmp").iterdir())
    # The replay's report goes to stderr; its last line is OK or FAILED: why.
    report = [line for line in replay.stderr.splitlines() if line.startswith(("OK", "FAILED"))]
    print(f"smoke: replay of the samples: {report[-1] if report else replay.stderr[-2000:]}")
    bad = [line for line in lines if not _is_log_line(line)]
    print(
        f"smoke: gRPC answering {grpc_seconds:.1f} s after start, Spark ready {spark_seconds:.1f} s"
    )
    print(f"smoke: {len(lines)} stdout line(s), {len(bad)} not Fivetran JSON; exit code {code}")
    failed = replay.returncode != 0 or bad or code != 0 or leftovers
    if bad:
        print("smoke: first non-JSON line: " + bad[0][:200])
    if leftovers:
        print(f"smoke: left behind in TMPDIR: {leftovers}")
    print("smoke: FAILED" if failed else "smoke: OK")
    return 1 if failed else 0


def _is_log_line(line: str) -> bool:
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return False
    return isinstance(value, dict) and set(value) == {"level", "message", "message-origin"}


def wait_for_grpc(port: int, started: float) -> float:
    sys.path.insert(0, str(REPO_ROOT / "src"))
    import grpc

    from spark_destination.replay.client import connect

    client = connect(f"127.0.0.1:{port}", timeout=2)
    try:
        while True:
            try:
                client.configuration_form()
                return time.monotonic() - started
            except grpc.RpcError:
                if time.monotonic() - started > START_TIMEOUT:
                    raise
                time.sleep(0.1)
    finally:
        client.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
