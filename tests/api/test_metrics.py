"""GET /metrics (service.http.metrics): scraped with prometheus-client's own parser, its counters
move with the traffic that should move them; it is not rate-limited, METRICS=off removes it,
METRICS_TOKEN protects it; and under `canfield serve` with two workers a scrape adds up both.

The API tests' session server runs in this process, so its counters carry what earlier tests did:
every check here compares a scrape before with one after."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import psutil
import pytest
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.test_cli import Served, _env
from tests.live import free_port
from tests.support import assert_problem

from .conftest import Player, running_server, server_settings

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
MOVES_ROUTE = "/games/{game_id}/moves"
TOKEN = "metrics-test-token-0123456789"


def parse(text: str) -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def scrape(client: httpx.Client, **headers: str) -> Samples:
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain"), response.headers
    return parse(response.text)


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def requests_of(samples: Samples, route: str, method: str, status: int) -> float:
    return value(samples, "canfield_http_request_duration_seconds_count", route=route, method=method,
                 status=str(status))


def test_a_move_counts_as_applied_and_as_a_request_of_the_route_template(client: httpx.Client, ann: Player) -> None:
    game = ann.new_game(ruleset="classic", deal={"seed": 7})
    before = scrape(client)
    assert ann.move(game["id"], {"type": "draw"}).status_code == 200
    after = scrape(client)
    assert value(after, "canfield_moves_applied_total") == value(before, "canfield_moves_applied_total") + 1
    assert requests_of(after, MOVES_ROUTE, "POST", 200) == requests_of(before, MOVES_ROUTE, "POST", 200) + 1
    # the move went to the database in a statement of its own: one batch of one more
    assert value(after, "canfield_move_batch_size_count") == value(before, "canfield_move_batch_size_count") + 1
    assert value(after, "canfield_move_batch_size_sum") == value(before, "canfield_move_batch_size_sum") + 1
    routes = {dict(labels).get("route") for name, labels in after if name.startswith("canfield_http_")}
    assert not any(game["id"] in route for route in routes if route), routes  # never the raw path
    assert "/metrics" in routes  # the scrape before this one was counted under its own route


def test_an_illegal_move_and_an_if_match_conflict_are_counted_and_apply_nothing(
    client: httpx.Client, ann: Player
) -> None:
    game = ann.new_game(ruleset="classic", deal={"seed": 8})
    before = scrape(client)
    assert_problem(ann.move(game["id"], {"type": "recycle"}), 422, "illegal_move")  # the stock is not empty
    assert_problem(ann.move(game["id"], {"type": "draw"}, **{"If-Match": '"5"'}), 412)
    after = scrape(client)
    assert value(after, "canfield_moves_illegal_total") == value(before, "canfield_moves_illegal_total") + 1
    assert value(after, "canfield_move_conflicts_total", at="if_match") == value(
        before, "canfield_move_conflicts_total", at="if_match") + 1
    assert value(after, "canfield_moves_applied_total") == value(before, "canfield_moves_applied_total")
    assert requests_of(after, MOVES_ROUTE, "POST", 422) == requests_of(before, MOVES_ROUTE, "POST", 422) + 1
    assert requests_of(after, MOVES_ROUTE, "POST", 412) == requests_of(before, MOVES_ROUTE, "POST", 412) + 1


def test_a_solver_hint_counts_its_verdict_and_its_job(client: httpx.Client, ann: Player) -> None:
    game = ann.new_game(ruleset="open-runs", deal={"seed": 3})
    before = scrape(client)
    response = client.get(f"/games/{game['id']}/hints", params={"solver": "true"}, headers=ann.auth, timeout=60)
    assert response.status_code == 200, response.text
    result = response.json()["solver"]["result"]
    after = scrape(client)
    assert value(after, "canfield_solver_hints_total", result=result) == value(
        before, "canfield_solver_hints_total", result=result) + 1
    jobs = "canfield_solver_job_duration_seconds_count"
    assert value(after, jobs, job="hint") == value(before, jobs, job="hint") + 1
    assert value(after, "canfield_solver_job_duration_seconds_sum", job="hint") > value(
        before, "canfield_solver_job_duration_seconds_sum", job="hint")


def test_an_open_stream_is_counted_until_it_closes(tmp_path: Path, clean_database: str) -> None:
    """On a server process of its own: the gauge is per process, and the tests' servers in this
    one open and close streams of their own."""
    port = free_port()
    served = Served(tmp_path, _env(DATABASE_URL=clean_database, PORT=str(port), WORKERS="1"), port)
    try:
        assert served.wait_until_up("/livez").status_code == 200
        with httpx.Client(base_url=served.base_url, timeout=10) as http:
            game = Player(http, "Ann").new_game(ruleset="classic", deal={"seed": 9})
            assert value(scrape(http), "canfield_streams_open") == 0
            with httpx.Client(base_url=served.base_url, timeout=10) as watcher, watcher.stream(
                "GET", f"/games/{game['id']}/stream"
            ) as stream:
                assert stream.status_code == 200
                # Kept in a name: an iterator dropped in mid-body is finalized at once, and httpcore
                # then closes the connection, which ends the stream on the server
                lines = stream.iter_lines()
                assert next(lines) == "event: view"  # the stream holds its slot
                assert value(scrape(http), "canfield_streams_open") == 1
            deadline = time.monotonic() + 10
            while value(scrape(http), "canfield_streams_open") != 0:
                assert time.monotonic() < deadline, "the closed stream is still counted"
                time.sleep(0.05)
    finally:
        served.kill()


def test_the_pool_gauges_show_the_connections(client: httpx.Client) -> None:
    samples = scrape(client)
    in_use = value(samples, "canfield_db_pool_connections", state="in_use")
    idle = value(samples, "canfield_db_pool_connections", state="idle")
    assert in_use >= 0
    assert idle >= 0
    assert in_use + idle >= 2  # DB_POOL_MIN: the pool keeps at least two connections open
    assert ("canfield_db_pool_waits_total", frozenset()) in samples


# ------------------------------------------------------------- a protected, rate-limited server


@pytest.fixture(scope="module")
def protected(database_url: str) -> Iterator[str]:
    settings = server_settings(database_url, metrics_token=TOKEN, rate_limit_reads_per_second=0.01,
                               rate_limit_read_burst=2)
    with running_server(settings) as url:
        yield url


def test_the_metrics_need_the_token_when_one_is_set(protected: str, clean_database: str) -> None:
    with httpx.Client(base_url=protected, timeout=10) as http:
        problem = assert_problem(http.get("/metrics"), 401, "unauthorized")
        assert "METRICS_TOKEN" in problem["detail"]
        assert_problem(http.get("/metrics", headers={"Authorization": "Bearer not-the-token"}), 401)
        assert_problem(http.get("/metrics", headers={"Authorization": TOKEN}), 401)  # no scheme
        assert scrape(http, Authorization=f"Bearer {TOKEN}")


def test_scrapes_are_not_rate_limited_and_refusals_are_counted(protected: str, clean_database: str) -> None:
    transport = httpx.HTTPTransport(local_address="127.0.0.7")  # a read budget of its own
    with httpx.Client(base_url=protected, timeout=10, transport=transport) as http:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        before = scrape(http, **auth)
        for _ in range(5):
            response = http.get("/metrics", headers=auth)
            assert response.status_code == 200
            assert "ratelimit" not in response.headers
        statuses = [http.get("/rulesets").status_code for _ in range(3)]  # a burst of 2 reads
        assert statuses == [200, 200, 429], statuses
        after = scrape(http, **auth)
    refusals = "canfield_rate_limit_refusals_total"
    assert value(after, refusals, budget="reads") == value(before, refusals, budget="reads") + 1
    assert requests_of(after, "/rulesets", "GET", 200) == requests_of(before, "/rulesets", "GET", 200) + 2
    assert requests_of(after, "(none)", "GET", 429) == requests_of(before, "(none)", "GET", 429) + 1  # refused unrouted
    assert requests_of(after, "/metrics", "GET", 200) == requests_of(before, "/metrics", "GET", 200) + 6


def test_a_path_that_matches_no_route_is_counted_under_none(client: httpx.Client) -> None:
    before = scrape(client)
    assert_problem(client.get("/no/such/thing/4f1c"), 404)
    after = scrape(client)
    assert requests_of(after, "(none)", "GET", 404) == requests_of(before, "(none)", "GET", 404) + 1
    assert not any("4f1c" in str(labels) for _, labels in after)


def test_metrics_off_is_not_found(database_url: str, clean_database: str) -> None:
    with running_server(server_settings(database_url, metrics=False)) as url, httpx.Client(base_url=url) as http:
        assert_problem(http.get("/metrics"), 404)
        assert http.get("/livez").status_code == 200


# ------------------------------------------------------------- two worker processes


def worker_pids(served: Served) -> list[int]:
    """The uvicorn worker processes of ``canfield serve`` (spawned by multiprocessing)."""
    children = psutil.Process(served.process.pid).children()
    return sorted(child.pid for child in children if "spawn_main" in " ".join(child.cmdline()))


def counted_by(directory: Path, pid: int, name: str) -> float:
    """What one process wrote to its own files for the counter ``name`` (its samples' sum)."""
    files = [str(path) for path in directory.glob(f"counter_{pid}.db")]
    return sum(sample.value for metric in MultiProcessCollector.merge(files, accumulate=True)
               for sample in metric.samples if sample.name == name)


def test_two_workers_are_summed_and_an_ended_one_is_forgotten(tmp_path: Path, clean_database: str) -> None:
    port = free_port()
    served = Served(tmp_path, _env(DATABASE_URL=clean_database, PORT=str(port), WORKERS="2"), port)
    try:
        assert served.wait_until_up("/livez").status_code == 200
        pids = worker_pids(served)
        assert len(pids) == 2, pids
        directory = Path(psutil.Process(pids[0]).environ()["PROMETHEUS_MULTIPROC_DIR"])
        assert directory.is_dir()
        moves = 0
        # new connections until the kernel has handed some to each worker, which then made moves
        for _ in range(200):
            with httpx.Client(base_url=served.base_url, timeout=10) as http:
                player = Player(http, "Ann")
                game = player.new_game(ruleset="classic", deal={"seed": 11})
                assert player.move(game["id"], {"type": "draw"}).status_code == 200
                moves += 1
            if all(counted_by(directory, pid, "canfield_moves_applied_total") for pid in pids):
                break
        own = [counted_by(directory, pid, "canfield_moves_applied_total") for pid in pids]
        assert all(own), own  # each worker made some of the moves
        assert sum(own) == moves, (own, moves)
        with httpx.Client(base_url=served.base_url, timeout=10) as http:
            assert all(value(scrape(http), "canfield_moves_applied_total") == moves for _ in range(4))
            os.kill(pids[1], signal.SIGKILL)  # uvicorn starts another; the dead one's counts stay
            # the next scrape forgets its live gauges (pool connections): their sums are of running processes
            assert _eventually(lambda: value(scrape(http), "canfield_moves_applied_total") == moves
                               and not (directory / f"gauge_livesum_{pids[1]}.db").exists(), 5), served.output()
        assert served.stop(signal.SIGTERM) == 0, served.output()
    finally:
        served.kill()
    assert not directory.exists(), "the metrics directory outlived the server"


def _eventually(check: Callable[[], bool], seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return True
        except httpx.TransportError:
            pass  # the killed worker's connection
        time.sleep(0.1)
    return False

