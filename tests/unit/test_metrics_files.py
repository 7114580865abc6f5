"""``GET /metrics`` with several server processes reads every process's metrics files
(service.http.metrics.exposition): a file a starting process has made but not yet sized is
left out, not an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prometheus_client.mmap_dict import MmapedDict
from prometheus_client.parser import text_string_to_metric_families

from service.http.metrics import exposition


def _counted(directory: Path, pid: int, value: float) -> None:
    """A process's counter file, as prometheus-client writes it."""
    key = json.dumps(["canfield_probe", "canfield_probe_total", {}, "a probe"])
    values = MmapedDict(str(directory / f"counter_{pid}.db"))
    values.write_value(key, value, 0.0)
    values.close()


def test_a_metrics_file_not_yet_sized_is_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    _counted(tmp_path, 101, 2.0)
    _counted(tmp_path, 102, 3.0)
    (tmp_path / "counter_103.db").touch()  # a process between creating its file and sizing it
    families = {family.name: family for family in text_string_to_metric_families(exposition().decode())}
    assert [sample.value for sample in families["canfield_probe"].samples if sample.name.endswith("_total")] == [5.0]
