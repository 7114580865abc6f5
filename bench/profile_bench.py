"""Where a move's server CPU goes: py-spy samples a real service process under load.

``python -m bench profile`` (not part of ``make bench``'s default list: it needs ``py-spy``, which
``make`` installs, and permission to read another process's memory, which root has). It starts the
service as ``bench api`` does (one process, embedded PostgreSQL or ``BENCH_DATABASE_URL``), drives
``PROFILE_CLIENTS`` clients (default 16) of draw/recycle moves for ``PROFILE_SECONDS`` (default
15) while ``py-spy record`` samples the server, then prints the functions with the most samples,
inclusive and by themselves. ``bench/results/profile.txt`` keeps the collapsed stacks (for any
flame graph tool), ``profile-summary.txt`` the summary.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from .harness.database import bench_database
from .harness.env import PROJECT_ROOT, RESULTS_DIR, quick
from .harness.load import new_service_game, run_load
from .harness.processes import start_server, stop_server, wait_healthy

RESULTS = RESULTS_DIR
CLIENTS = int(os.environ.get("PROFILE_CLIENTS", "16"))
SECONDS = float(os.environ.get("PROFILE_SECONDS", quick("15", "3")))
TOP = 40
_LINE = re.compile(r":\d+\)$")


def py_spy() -> str:
    found = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(found).exists():
        raise SystemExit("profile: py-spy is not installed (`make` installs it into .venv)")
    return found


def summarize(collapsed: Path) -> str:
    """The functions with the most samples: inclusive (on the stack) and by themselves (on top)."""
    inclusive: Counter[str] = Counter()
    itself: Counter[str] = Counter()
    total = 0
    for line in collapsed.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue  # py-spy now and then writes a line garbled by a racing read of the process's memory
        count = int(count_text)
        total += count
        frames = [_LINE.sub(")", frame) for frame in stack.split(";")]  # one entry per function
        for frame in set(frames):
            inclusive[frame] += count
        itself[frames[-1]] += count
    lines = [f"{total} samples of the server process"]
    for title, counter in (("inclusive", inclusive), ("self", itself)):
        lines.append(f"-- top {TOP} by {title} samples")
        for frame, count in counter.most_common(TOP):
            lines.append(f"{100 * count / max(total, 1):6.1f}%  {frame}")
    return "\n".join(lines)


async def _load(port: int) -> dict[str, object]:
    games = await asyncio.gather(*(new_service_game(port, 1000 + i) for i in range(CLIENTS)))
    return await run_load(port, list(games), 2.0, SECONDS, None, None)


def main() -> None:
    spy = py_spy()
    RESULTS.mkdir(parents=True, exist_ok=True)
    work_dir = Path(tempfile.mkdtemp(prefix="canfield-profile-"))
    try:
        with bench_database(work_dir) as db:
            server = start_server("service", "service.http.asgi:app", db.url, work_dir)
            try:
                wait_healthy(server)
                collapsed = RESULTS / "profile.txt"
                command = [spy, "record", "--pid", str(server.process.pid), "--duration", str(int(SECONDS)),
                           "--rate", "200", "--nonblocking"]
                raw = subprocess.Popen([*command, "--format", "raw", "--output", str(collapsed)],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                result = asyncio.run(_load(server.port))
                _, error = raw.communicate(timeout=SECONDS + 30)
                if raw.returncode != 0:
                    raise SystemExit(f"profile: py-spy failed: {error.decode(errors='replace')[-2000:]}")
            finally:
                stop_server(server)
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    print(f"profile: {CLIENTS} clients, {result['per_second']:.0f} moves/s, p50 {result['p50_ms']:.2f} ms")
    text = summarize(collapsed)
    print(text)
    (RESULTS / "profile-summary.txt").write_text(text + "\n")
    print(f"(collapsed stacks in {collapsed.relative_to(PROJECT_ROOT)})")
