"""Server processes under test: started as in production, awaited until healthy, stopped."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .env import HOST, PINNING, PROJECT_ROOT, WORKERS
from .service_api import uvicorn_arguments


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Server:
    name: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path


def start_server(
    name: str, app: str, database_url: str, log_dir: Path, extra_env: dict[str, str] | None = None,
    *, prefix: Sequence[str] = (), pin: bool = True,
) -> Server:
    """``app`` served as in production, rate limits off, on ``PINNING``'s server CPU unless ``pin``
    is False; ``prefix`` runs it under another program (valgrind)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"DB_POOL_MIN", "DB_POOL_MAX", "DB_STATEMENT_TIMEOUT_MS"}}
    env.update(extra_env or {})
    env["DATABASE_URL"] = database_url
    for limit in ("WRITES_PER_SECOND", "WRITE_BURST", "READS_PER_SECOND", "READ_BURST"):
        env[f"RATE_LIMIT_{limit}"] = "0"  # the load generator is one address hammering on purpose
    env["PYTHONPATH"] = str(PROJECT_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    log = log_dir / f"{name}.log"
    command = [*prefix, sys.executable, "-m", "uvicorn", app, "--host", HOST, "--port", str(port),
               "--log-level", "warning", "--no-access-log", "--workers", str(WORKERS), *uvicorn_arguments()]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    if pin and PINNING is not None:  # at once, while the interpreter starts: its threads inherit it
        os.sched_setaffinity(process.pid, PINNING[0])
    return Server(name, port, process, log)


def health_ok(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}/health", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def wait_healthy(server: Server, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            break
        try:
            with urllib.request.urlopen(f"http://{HOST}:{server.port}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    tail = server.log.read_text(errors="replace")[-3000:]
    raise RuntimeError(f"{server.name} did not become healthy on port {server.port}:\n{tail}")


def stop_server(server: Server) -> None:
    if server.process.poll() is None:
        server.process.terminate()  # uvicorn shuts down gracefully on SIGTERM
        try:
            server.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()
