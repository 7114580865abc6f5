"""Paths, the loopback host, server processes per target (``BENCH_WORKERS``) and CPU pinning."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
RESULTS_DIR = PROJECT_ROOT / "bench" / "results"
HOST = "127.0.0.1"
WORKERS = int(os.environ.get("BENCH_WORKERS", "1"))  # server processes for the service and the ceiling


QUICK = os.environ.get("BENCH_QUICK", "") not in ("", "0")
"""``BENCH_QUICK=1``: every scenario's defaults shrink to a run of seconds (fewer rounds, shorter
windows, fewer moves), to check that it runs and what it reports; a variable given explicitly
still wins. Never figures to quote."""


def quick(normal: T, short: T) -> T:
    """A default: ``short`` under ``BENCH_QUICK=1``, else ``normal``."""
    return short if QUICK else normal


def float_env(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    try:
        return float(raw) if raw else default
    except ValueError:
        raise SystemExit(f"{name} must be a number of seconds, not {raw!r}") from None


def _pinning() -> tuple[set[int], set[int]] | None:
    """``BENCH_PIN`` (default 1, with one server process and 2+ CPUs): each server under test runs on
    the first CPU alone, and everything else the bench starts (PostgreSQL, the load generator) on
    the others, so the three targets meet the same conditions in every round instead of whatever
    the scheduler makes of five busy processes on two cores (rounds of the same code varied 2x here
    unpinned). ``BENCH_PIN=0``: nothing is pinned."""
    if os.environ.get("BENCH_PIN", "1") == "0" or WORKERS != 1 or not hasattr(os, "sched_setaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None
    return {cpus[0]}, set(cpus[1:])


PINNING = _pinning()
