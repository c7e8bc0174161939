"""Smoke-test a frozen destination on a bare environment and print its start-up figures.

Usage: ``python scripts/smoke_frozen.py dist/main`` (or ``dist/main/main`` for a one-folder
build). The program runs as under ``env -i``: only ``HOME``, ``TMPDIR`` and a ``PATH`` of
symlinks to the system's tools without any ``python*``, ``pip*`` or ``java*``. The bundled
samples are replayed against it through this (virtualenv) Python's gRPC client, as the tester
would, once on its local warehouse and once on S3 (a SeaweedFS server, with its REST catalog,
started beside it: the frozen program carries the AWS bundle); every stdout line must be a
Fivetran JSON log line; SIGTERM must stop it cleanly.
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

from spark_destination.local_services.object_store import object_store

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


def _replay(port: int, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(REPO_ROOT / ".venv" / "bin" / "spark-destination"),
            "replay",
            str(SAMPLES),
            "--address",
            f"127.0.0.1:{port}",
            *extra,
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=REPLAY_TIMEOUT,
    )


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
        replay = _replay(port)
        with object_store(root / "s3") as store:
            on_s3 = {"catalog": "seaweed", **store.rest_configuration()}
            flags = [f"--{k.replace('_', '-')}={v}" for k, v in on_s3.items()]
            replay_s3 = _replay(port, "--schema", "tester_s3", *flags)
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=120)
        reader.join(timeout=10)
        leftovers = sorted(p.name for p in (root / "tmp").iterdir())
    # The replay's report goes to stderr; its last line is OK or FAILED: why.
    for where, run in (("a local warehouse", replay), ("S3 (SeaweedFS)", replay_s3)):
        report = [line for line in run.stderr.splitlines() if line.startswith(("OK", "FAILED"))]
        verdict = report[-1] if report else run.stderr[-2000:]
        print(f"smoke: replay of the samples on {where}: {verdict}")
    bad = [line for line in lines if not _is_log_line(line)]
    print(
        f"smoke: gRPC answering {grpc_seconds:.1f} s after start, Spark ready {spark_seconds:.1f} s"
    )
    print(f"smoke: {len(lines)} stdout line(s), {len(bad)} not Fivetran JSON; exit code {code}")
    failed = replay.returncode != 0 or replay_s3.returncode != 0 or bad or code != 0 or leftovers
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
