"""`canfield` as a real process: serve until SIGINT/SIGTERM, and the OpenAPI export."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.live import die_with_pytest, free_port

PROJECT_ROOT = Path(__file__).resolve().parents[2]
CANFIELD = [sys.executable, "-m", "service.cli"]


def _env(**overrides: str | None) -> dict[str, str]:
    env = dict(os.environ)
    for key in ("DATABASE_URL", "HOST", "PORT", "WORKERS", "CANFIELD_DATA_DIR"):
        env.pop(key, None)
    env.update({key: value for key, value in overrides.items() if value is not None})
    return env


class Served:
    """`canfield serve` in a subprocess, its output in a file."""

    def __init__(self, tmp_path: Path, env: dict[str, str], port: int) -> None:
        self.log = tmp_path / "serve.log"
        self.base_url = f"http://127.0.0.1:{port}"
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(
                [*CANFIELD, "serve"],
                cwd=PROJECT_ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,

                preexec_fn=die_with_pytest if sys.platform == "linux" else None,  # noqa: PLW1509
            )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_until_up(self, path: str, timeout: float = 30.0) -> httpx.Response:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"canfield serve exited with {self.process.returncode}:\n{self.output()}")
            try:
                return httpx.get(self.base_url + path, timeout=2)
            except httpx.TransportError:
                time.sleep(0.1)
        self.kill()
        pytest.fail(f"canfield serve did not answer within {timeout}s:\n{self.output()}")

    def stop(self, signum: int, timeout: float = 10.0) -> int:
        self.process.send_signal(signum)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"canfield serve did not stop within {timeout}s after {signum}:\n{self.output()}")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_serve_with_database_url_stops_cleanly(tmp_path: Path, clean_database: str, signum: int) -> None:
    port = free_port()
    served = Served(tmp_path, _env(DATABASE_URL=clean_database, PORT=str(port)), port)
    try:
        response = served.wait_until_up("/health")
        assert response.status_code == 200, response.text
        assert served.wait_until_up("/schema/openapi.json").status_code == 200
        asked = httpx.get(served.base_url + "/rulesets", headers={"X-Request-Id": "cli-access-line"}, timeout=5)
        assert asked.status_code == 200
        assert served.stop(signum) == 0, served.output()
    finally:
        served.kill()
    output = served.output()
    assert f"serving on http://127.0.0.1:{port}" in output
    assert "from DATABASE_URL" in output
    # the server process's access log: one JSON line for the request, written before it exited
    [line] = [json.loads(text) for text in output.splitlines() if "cli-access-line" in text]
    assert (line["logger"], line["method"], line["route"]) == ("canfield.access", "GET", "/rulesets")
    assert line["status"] == 200


def test_serve_with_the_embedded_database(tmp_path: Path) -> None:
    """No DATABASE_URL: the embedded server is started, migrated, and stopped again on SIGINT."""
    port = free_port()
    data_dir = tmp_path / "data"
    served = Served(tmp_path, _env(CANFIELD_DATA_DIR=str(data_dir), PORT=str(port)), port)
    try:
        response = served.wait_until_up("/health", timeout=60)
        assert response.status_code == 200, response.text
        pid_file = data_dir / "pg" / "postmaster.pid"
        assert pid_file.exists()
        assert served.stop(signal.SIGINT) == 0, served.output()
    finally:
        served.kill()
    assert "embedded PostgreSQL" in served.output()
    assert not pid_file.exists(), "the embedded server was left running"


def test_migrate_command(clean_database: str) -> None:
    result = subprocess.run(
        [*CANFIELD, "migrate"], cwd=PROJECT_ROOT, env=_env(DATABASE_URL=clean_database),
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == 0, result.stderr
    with psycopg.connect(clean_database) as conn:
        assert conn.execute("SELECT count(*) FROM alembic_version").fetchone() == (1,)


def test_openapi_prints_stable_json(tmp_path: Path) -> None:
    env = _env(DATABASE_URL="postgresql://nobody@127.0.0.1:1/nowhere")  # must not be used
    printed = subprocess.run(
        [*CANFIELD, "openapi"], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert printed.returncode == 0, printed.stderr
    document = json.loads(printed.stdout)
    assert "openapi" in document
    assert "paths" in document
    assert printed.stdout == json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    output = tmp_path / "out" / "openapi.json"
    written = subprocess.run(
        [*CANFIELD, "openapi", "--output", str(output)],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
    )
    assert written.returncode == 0, written.stderr
    assert written.stdout == ""
    assert output.read_text() == printed.stdout


def test_help_lists_the_commands() -> None:
    result = subprocess.run([*CANFIELD, "--help"], capture_output=True, text=True, timeout=30, check=False)
    assert result.returncode == 0
    for command in ("serve", "migrate", "openapi"):
        assert command in result.stdout


def test_ctrl_c_on_make_run_stops_the_server_its_workers_and_the_embedded_database(tmp_path: Path) -> None:
    """A terminal's Ctrl-C: SIGINT to the whole foreground process group of `make run` (make,
    `canfield serve`, its two workers). Everything stops, the embedded PostgreSQL too."""
    import psutil

    make = shutil.which("make")
    if make is None:
        pytest.skip("SKIPPED LOUDLY: `make` is not installed, so `make run` cannot be tested here")
    env = _env(CANFIELD_DATA_DIR=str(tmp_path / "data"), PORT=str(free_port()), WORKERS="2")
    if subprocess.run([make, "-q", ".venv/.installed"], cwd=PROJECT_ROOT, env=env, check=False).returncode != 0:
        pytest.skip("SKIPPED LOUDLY: .venv is not installed from the current lock (run `make test`), "
                    "so `make run` would reinstall it instead of serving")
    port = int(env["PORT"])
    log = tmp_path / "make-run.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([make, "run"], cwd=PROJECT_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)  # its own process group, like a terminal's job
    started: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 90
        while True:
            assert process.poll() is None, log.read_text(errors="replace")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.2)
        pid_file = tmp_path / "data" / "pg" / "postmaster.pid"
        postmaster = psutil.Process(int(pid_file.read_text().split()[0]))
        started = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True), postmaster]
        assert len(started) >= 5, started  # make, canfield serve, 2 workers (and their helpers), postgres

        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=30)
        _, alive = psutil.wait_procs(started, timeout=30)
        assert alive == [], f"still running after Ctrl-C: {alive}\n{log.read_text(errors='replace')}"
        assert not pid_file.exists(), "the embedded server was left running"
        with pytest.raises(httpx.TransportError):
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
        assert "canfield: stopped" in log.read_text(errors="replace")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        for leftover in started:
            if leftover.is_running():
                leftover.kill()
