"""OTEL_TRACING: a server span per request, named after its route and carrying it, recorded by the
OpenTelemetry SDK's in-memory exporter; a trace a client started goes on; and without the
instrumentation package the server refuses to start, saying what to install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from service.http import tracing
from service.http.app import create_app

from .conftest import Player, running_server, server_settings

PROJECT_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    """Finished spans of the process's tracer provider (an SDK one, set once for the process)."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return memory


def test_each_request_is_a_server_span_named_after_its_route(
    exporter: InMemorySpanExporter, clean_database: str
) -> None:
    settings = server_settings(clean_database, otel_tracing=True)
    with running_server(settings, app=create_app(settings)) as url, httpx.Client(base_url=url, timeout=10) as client:
        player = Player(client, "Traced")
        game = player.new_game(ruleset="classic", deal={"seed": 4})["id"]
        exporter.clear()
        assert client.get(f"/games/{game}").status_code == 200
        assert player.move(game, {"type": "draw"}).status_code == 200
        assert client.get("/games/not-a-game").status_code in (400, 404)
        parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        assert client.get("/rulesets", headers={"traceparent": parent}).status_code == 200

    servers = [span for span in exporter.get_finished_spans() if span.kind is SpanKind.SERVER]
    named = [(span.name, (span.attributes or {}).get("http.route")) for span in servers]
    assert named[0] == ("GET /games/{game_id}", "/games/{game_id}")
    assert named[1] == ("POST /games/{game_id}/moves", "/games/{game_id}/moves")  # the move route (ASGI) too
    assert len(servers) == 4, named  # one a request, whatever it answered
    assert named[2] == ("GET", None)  # refused before routing: no route, and not the path (one name a game)
    assert named[3] == ("GET /rulesets", "/rulesets")
    assert format(servers[3].context.trace_id, "032x") == "0af7651916cd43dd8448eb211c80319c"  # the client's trace
    assert servers[3].parent is not None
    assert format(servers[3].parent.span_id, "016x") == "b7ad6b7169203331"


def test_without_the_instrumentation_the_app_refuses_to_start(
    monkeypatch: pytest.MonkeyPatch, database_url: str
) -> None:
    monkeypatch.setitem(sys.modules, tracing.MODULE, None)  # as if it were not installed
    with pytest.raises(tracing.TracingUnavailable, match="needs the package opentelemetry-instrumentation-asgi"):
        create_app(server_settings(database_url, otel_tracing=True))
    create_app(server_settings(database_url))  # tracing off: nothing is needed


def test_canfield_serve_with_tracing_but_no_instrumentation_fails_with_a_clear_message() -> None:
    blocked = (
        "import sys; sys.modules['opentelemetry.instrumentation.asgi'] = None; "
        "from service.cli import main; sys.exit(main(['serve']))"
    )
    env = {**os.environ, "OTEL_TRACING": "1", "DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"}
    result = subprocess.run([sys.executable, "-c", blocked], cwd=PROJECT_ROOT, env=env, capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 1
    assert "canfield serve: OTEL_TRACING=1 needs the package opentelemetry-instrumentation-asgi" in result.stderr
    assert "Traceback" not in result.stderr
