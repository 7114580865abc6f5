"""Server processes under test: started as in production (the soak's service with its own settings),
awaited until healthy, stopped."""

from __future__ import annotations

import asyncio
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


def _spawn(name: str, app: str, env: dict[str, str], log_dir: Path, prefix: Sequence[str] = ()) -> Server:
    """``app`` under uvicorn as in production (``BENCH_WORKERS`` processes), its output to ``<name>.log``."""
    port = free_port()
    env["PYTHONPATH"] = str(PROJECT_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    log = log_dir / f"{name}.log"
    command = [*prefix, sys.executable, "-m", "uvicorn", app, "--host", HOST, "--port", str(port),
               "--log-level", "warning", "--no-access-log", "--workers", str(WORKERS), *uvicorn_arguments()]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    return Server(name, port, process, log)


def start_server(
    name: str, app: str, database_url: str, log_dir: Path, extra_env: dict[str, str] | None = None,
    *, prefix: Sequence[str] = (), pin: bool = True,
) -> Server:
    """``app`` served as in production, rate limits off, on ``PINNING``'s server CPU unless ``pin``
    is False; ``prefix`` runs it under another program (valgrind)."""
    env = {k: v for k, v in os.environ.items() if k not in {"DB_POOL_MIN", "DB_POOL_MAX", "DB_STATEMENT_TIMEOUT_MS"}}
    env.update(extra_env or {})
    env["DATABASE_URL"] = database_url
    for limit in ("WRITES_PER_SECOND", "WRITE_BURST", "READS_PER_SECOND", "READ_BURST"):
        env[f"RATE_LIMIT_{limit}"] = "0"  # the load generator is one address hammering on purpose
    server = _spawn(name, app, env, log_dir, prefix)
    if pin and PINNING is not None:  # at once, while the interpreter starts: its threads inherit it
        os.sched_setaffinity(server.process.pid, PINNING[0])
    return server


def start_service(database_url: str, log_dir: Path) -> Server:
    """The service as the soak runs it: no ``DB_`` or ``RATE_LIMIT_`` setting of the environment,
    rate limits off, a request waiting at most 1 s for a database connection before its 503."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DB_", "RATE_LIMIT_"))}
    env.update({
        "DATABASE_URL": database_url,
        "RATE_LIMIT_WRITES_PER_SECOND": "0",
        "RATE_LIMIT_READS_PER_SECOND": "0",
        "DB_POOL_TIMEOUT_MS": "1000",
    })
    return _spawn("service", "service.http.asgi:app", env, log_dir)


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
        if health_ok(server.port):
            return
        time.sleep(0.1)
    tail = server.log.read_text(errors="replace")[-3000:]
    raise RuntimeError(f"{server.name} did not become healthy on port {server.port}:\n{tail}")


async def await_healthy(server: Server, timeout: float = 30.0) -> None:
    """``wait_healthy`` for a caller on an event loop, which goes on running meanwhile."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            break
        if await asyncio.to_thread(health_ok, server.port):
            return
        await asyncio.sleep(0.1)
    raise RuntimeError(f"the service did not come up:\n{server.log.read_text(errors='replace')[-3000:]}")


def stop_server(server: Server) -> None:
    if server.process.poll() is None:
        server.process.terminate()  # uvicorn shuts down gracefully on SIGTERM
        try:
            server.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()
