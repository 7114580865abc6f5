"""A server under valgrind's callgrind (instructions between two points) or strace (system calls
by name): counts that the machine's load does not change, only what the code does."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

_SUMMARY = re.compile(rb"^(?:summary|totals):\s*(\d+)", re.MULTILINE)


def callgrind_prefix(name: str, work_dir: Path) -> list[str]:
    """The command that runs a server under callgrind, its dumps ``callgrind.<name>.out*`` in ``work_dir``."""
    out = work_dir / f"callgrind.{name}.out"
    return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no", "--trace-children=no"]


def callgrind(pid: int, option: str, work_dir: Path, keep: Path) -> int:
    """``callgrind_control -z`` (zero) or ``-d`` (dump): after a dump, the instructions since the zero;
    the dump is copied to ``keep`` (the last one, for callgrind_annotate)."""
    before = set(work_dir.glob("callgrind.*"))
    subprocess.run(["callgrind_control", option, str(pid)], check=True, capture_output=True, timeout=600)
    if option != "-d":
        return 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        new = sorted(set(work_dir.glob("callgrind.*")) - before, key=lambda p: p.stat().st_mtime)
        for path in reversed(new):
            found = _SUMMARY.search(path.read_bytes())
            if found:
                keep.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, keep)
                return int(found.group(1))
        time.sleep(0.2)
    raise RuntimeError("callgrind wrote no dump")


def start_strace(pid: int, work_dir: Path) -> subprocess.Popen[bytes]:
    """``strace -c`` on the server (every thread) until ``strace_calls``: system calls by name."""
    tracer = subprocess.Popen(["strace", "-c", "-f", "-p", str(pid), "-o", str(work_dir / "strace.txt")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # attached
    return tracer


def strace_calls(tracer: subprocess.Popen[bytes], work_dir: Path) -> dict[str, int]:
    tracer.send_signal(signal.SIGINT)
    tracer.wait(timeout=30)
    calls: dict[str, int] = {}
    for line in (work_dir / "strace.txt").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
            calls[parts[-1]] = int(parts[3])
    return dict(sorted(calls.items(), key=lambda item: -item[1]))
