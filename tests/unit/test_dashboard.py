"""The monitoring files stay true to the service: every metric the Grafana dashboard queries (and
every label it groups or filters by) is one the service exports, docs/metrics.md lists exactly
the exported metrics, and docker-compose.yml's `monitoring` profile runs Prometheus and Grafana
with the files under docs/ mounted where their configurations expect them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.metrics import MetricWrapperBase

import service.metrics

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "docs" / "grafana" / "canfield.json"
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}
_METRIC = re.compile(r"\b(canfield_[a-z_]+)")
_MATCHERS = re.compile(r"(canfield_[a-z_]+)\{([^}]*)\}")
_BY = re.compile(r"\bby \(([^)]*)\)")


def instruments() -> dict[str, MetricWrapperBase]:
    return {value._name: value for value in vars(service.metrics).values() if isinstance(value, MetricWrapperBase)}


def exported_samples() -> dict[str, tuple[str, ...]]:
    """Every sample name the service exports, with the labels of its metric (histogram buckets: ``le`` too)."""
    found: dict[str, tuple[str, ...]] = {}
    for name, metric in instruments().items():
        for suffix in SUFFIXES[metric._type]:
            found[name + suffix] = (*metric._labelnames, *(("le",) if suffix == "_bucket" else ()))
    return found


def expressions() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [target["expr"] for panel in panels for target in panel.get("targets", ())]


def test_the_service_exports_what_the_docs_say() -> None:
    assert {"canfield_moves_applied", "canfield_http_request_duration_seconds"} <= set(instruments())
    table = (ROOT / "docs" / "metrics.md").read_text().split("## Every metric", 1)[1].split("\n## ", 1)[0]
    documented = re.findall(r"^\| `(canfield_[a-z_]+)` \| (\w+) \|", table, re.MULTILINE)
    exported = [(sample, metric._type) for name, metric in instruments().items()
                for sample in [name + ("_total" if metric._type == "counter" else "")]]
    assert sorted(documented) == sorted(exported)


def test_every_metric_the_dashboard_queries_is_exported() -> None:
    samples = exported_samples()
    used = {name for expr in expressions() for name in _METRIC.findall(expr)}
    assert used, "the dashboard queries nothing"
    assert used <= set(samples), sorted(used - set(samples))
    # and it shows every instrument the service has
    assert {name for name in instruments() if not any(sample.startswith(name) for sample in used)} == set()


def test_every_label_the_dashboard_filters_or_groups_by_exists() -> None:
    samples = exported_samples()
    for expr in expressions():
        for name, matchers in _MATCHERS.findall(expr):
            labels = {matcher.split("=")[0].strip().rstrip("!~") for matcher in matchers.split(",") if matcher.strip()}
            assert labels <= set(samples[name]), (expr, labels)
        available = {label for name in _METRIC.findall(expr) for label in samples[name]}
        for grouped in _BY.findall(expr):
            assert {label.strip() for label in grouped.split(",")} <= available, expr


def test_the_dashboard_panels_each_have_a_query_and_a_place() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] == "canfield"
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        assert {"h", "w", "x", "y"} <= set(panel["gridPos"]), panel["title"]
        if panel["type"] != "row":
            assert panel["targets"], panel["title"]
            assert all(target["expr"] for target in panel["targets"]), panel["title"]


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return loaded


def mounts(service: dict[str, Any]) -> dict[str, Path]:
    """A service's bind mounts from the repository: container path -> the file or folder here."""
    found = {}
    for volume in service.get("volumes", ()):
        source, target = volume.split(":")[:2]
        if source.startswith("./"):
            found[target] = ROOT / source
    return found


def test_the_monitoring_profile_runs_prometheus_and_grafana_beside_the_service(compose: dict[str, Any]) -> None:
    services = compose["services"]
    in_profile = {name for name, service in services.items() if "monitoring" in service.get("profiles", ())}
    assert in_profile == {"prometheus", "grafana"}
    assert not services["api"].get("profiles")
    assert not services["db"].get("profiles")
    assert "METRICS_TOKEN" in services["api"]["environment"]
    for name in in_profile:
        for target, source in mounts(services[name]).items():
            assert source.exists(), (name, target, source)


def test_prometheus_scrapes_the_api_with_the_token_compose_hands_it(compose: dict[str, Any]) -> None:
    prometheus = compose["services"]["prometheus"]
    config_path = mounts(prometheus)["/etc/prometheus/prometheus.yml"]
    assert "--config.file=/etc/prometheus/prometheus.yml" in prometheus["command"]
    config = yaml.safe_load(config_path.read_text())
    (job,) = config["scrape_configs"]
    assert job["metrics_path"] == "/metrics"
    assert [target for group in job["static_configs"] for target in group["targets"]] == ["api:8000"]
    (secret,) = prometheus["secrets"]
    assert job["authorization"]["credentials_file"] == f"/run/secrets/{secret}"
    assert compose["secrets"][secret] == {"environment": "METRICS_TOKEN"}


def test_grafana_is_provisioned_with_the_datasource_and_the_dashboard(compose: dict[str, Any]) -> None:
    grafana = compose["services"]["grafana"]
    mounted = mounts(grafana)
    provisioning = mounted["/etc/grafana/provisioning"]
    (datasource,) = yaml.safe_load((provisioning / "datasources" / "prometheus.yml").read_text())["datasources"]
    assert datasource["type"] == "prometheus"
    assert datasource["url"] == "http://prometheus:9090"
    (provider,) = yaml.safe_load((provisioning / "dashboards" / "canfield.yml").read_text())["providers"]
    folder = provider["options"]["path"]
    dashboards = {target: source for target, source in mounted.items() if target.startswith(folder + "/")}
    assert list(dashboards.values()) == [DASHBOARD]
    assert grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"] in dashboards
