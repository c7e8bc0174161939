"""A JVM of a local service's own, reached through py4j: started with a classpath and a heap,
stopped with the gateway (the Hive metastore's schema set-up, the REST catalog server)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from spark_destination.core.errors import ConfigurationError
from spark_destination.local_services.process_group import STOP_TIMEOUT_SECONDS
from spark_destination.runtime.spark.java import java_home


@dataclass(frozen=True, slots=True)
class Gateway:
    gateway: Any  # py4j.java_gateway.JavaGateway
    process: subprocess.Popen[bytes]

    @property
    def jvm(self) -> Any:
        return self.gateway.jvm

    def close(self) -> None:
        """Shut the gateway down and wait for its JVM (killed if it does not exit)."""
        with contextlib.suppress(Exception):
            self.gateway.shutdown()
        try:
            self.process.wait(timeout=STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=STOP_TIMEOUT_SECONDS)


def launch(
    classpath: str,
    *,
    heap: str,
    java_options: Sequence[str] = (),
    stderr: IO[bytes] | int = subprocess.DEVNULL,
) -> Gateway:
    """A JVM with py4j's gateway server on ``classpath`` (the py4j package's own jar first),
    dying with this process."""
    from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

    folder = Path(sys.prefix) / "share" / "py4j"
    jars = sorted(folder.glob("py4j*.jar"))
    if not jars:
        raise ConfigurationError(f"no py4j jar in {folder}: reinstall the py4j package")
    port, process = launch_gateway(
        jarpath=str(jars[-1]),
        classpath=classpath,
        java_path=str(Path(java_home()) / "bin" / "java"),
        javaopts=[f"-Xmx{heap}", *java_options],
        die_on_exit=True,
        return_proc=True,
        redirect_stderr=stderr,
        redirect_stdout=subprocess.DEVNULL,
    )
    return Gateway(JavaGateway(gateway_parameters=GatewayParameters(port=port)), process)
