"""With the database unreachable the service answers 503 problems with Retry-After, never 500."""

from collections.abc import Iterator

import httpx
import pytest

from service.settings import Settings
from tests.support import assert_problem

from .conftest import free_port, running_server


@pytest.fixture(scope="module")
def dead_database_server() -> Iterator[str]:
    settings = Settings(
        database_url=f"postgresql://postgres@127.0.0.1:{free_port()}/none",
        port=free_port(),
        pool_min_size=1,
        pool_timeout_seconds=0.5,
    )
    with running_server(settings) as url:
        yield url


def test_health_is_503_when_the_database_does_not_answer(dead_database_server: str) -> None:
    response = httpx.get(f"{dead_database_server}/health", timeout=15)
    assert_problem(response, 503, "unavailable")


def test_reads_and_writes_are_503_with_retry_after_when_the_database_is_down(dead_database_server: str) -> None:
    game = "00000000-0000-4000-8000-000000000000"
    for response in (
        httpx.get(f"{dead_database_server}/games/{game}", timeout=15),
        httpx.post(f"{dead_database_server}/players", json={"name": "x"}, timeout=15),
        httpx.post(
            f"{dead_database_server}/games/{game}/moves",
            json={"type": "draw"},
            headers={"Authorization": "Bearer abc"},
            timeout=15,
        ),
    ):
        assert_problem(response, 503, "unavailable")
        assert response.headers["retry-after"] == "1"


def test_the_process_is_live_but_not_ready_without_its_database(dead_database_server: str) -> None:
    assert httpx.get(f"{dead_database_server}/livez", timeout=15).status_code == 200
    ready = httpx.get(f"{dead_database_server}/readyz", timeout=15)
    assert_problem(ready, 503, "unavailable")
    assert "database is not answering" in ready.json()["detail"]
    assert "stream listener is not connected" in ready.json()["detail"]
