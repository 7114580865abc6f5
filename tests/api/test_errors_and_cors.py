import httpx
import pytest

from tests.support import assert_problem

from .conftest import Player

GAME = "00000000-0000-4000-8000-000000000000"


def test_an_unknown_route_is_a_404_problem(client: httpx.Client) -> None:
    assert_problem(client.get("/nowhere"), 404, "not_found")
    assert_problem(client.post("/nowhere", json={}), 404, "not_found")


def test_a_wrong_method_is_a_405_problem(client: httpx.Client) -> None:
    assert_problem(client.delete("/games"), 405, "method_not_allowed")
    assert_problem(client.put("/rulesets"), 405, "method_not_allowed")


def test_a_wrong_content_type_is_a_415_problem(ann: Player) -> None:
    response = ann.client.post(
        "/games", content=b'{"deal": {"seed": 1}}', headers={**ann.auth, "Content-Type": "text/plain"}
    )
    assert_problem(response, 415, "unsupported_media_type")
    no_type = ann.client.post("/players", content=b'{"name": "x"}')
    assert_problem(no_type, 415, "unsupported_media_type")


@pytest.mark.parametrize(
    "body", [b"{", b"[]", b'{"name": 3}', b"null", b"\xff\xfe", b'{"name": "a", "name": "b", "x": 1}']
)
def test_malformed_json_is_a_400_problem(client: httpx.Client, body: bytes) -> None:
    response = client.post("/players", content=body, headers={"Content-Type": "application/json"})
    assert_problem(response, 400, "invalid_request")


def test_a_body_over_the_limit_is_a_413_problem(ann: Player) -> None:
    huge = b'{"deal": {"deck": ["' + b"A" * 40_000 + b'"]}}'
    response = ann.client.post("/games", content=huge, headers={**ann.auth, "Content-Type": "application/json"})
    assert_problem(response, 413, "payload_too_large")


@pytest.mark.parametrize(
    "path",
    [
        "/games/not-a-uuid",
        f"/games/{GAME}/states/abc",
        "/players/123",
    ],
)
def test_a_bad_path_parameter_is_a_4xx_problem(client: httpx.Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code in {400, 404}
    assert_problem(response, response.status_code, response.json()["code"])


@pytest.mark.parametrize("query", ["limit=0", "limit=5000", "after=-1", "limit=abc", "after=99999999999999999999"])
def test_a_bad_query_parameter_is_a_400_problem(ann: Player, query: str) -> None:
    game = ann.new_game(deal={"seed": 1})
    assert_problem(ann.client.get(f"/games/{game['id']}/events?{query}"), 400, "invalid_request")


def test_a_huge_state_version_is_a_4xx_problem(ann: Player) -> None:
    game = ann.new_game(deal={"seed": 1})
    response = ann.client.get(f"/games/{game['id']}/states/99999999999999999999999")
    assert response.status_code in {400, 404}


def test_preflight_allows_browser_clients_on_other_origins(client: httpx.Client) -> None:
    response = client.options(
        f"/games/{GAME}/moves",
        headers={
            "Origin": "https://cards.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, if-match, idempotency-key",
        },
    )
    assert response.status_code in {200, 204}
    assert response.headers["access-control-allow-origin"] in {"*", "https://cards.example"}
    allowed = response.headers["access-control-allow-headers"].lower()
    for header in ("authorization", "content-type", "if-match", "idempotency-key"):
        assert header in allowed
    assert "POST" in response.headers["access-control-allow-methods"]


def test_reads_errors_and_the_openapi_document_carry_cors_headers(ann: Player) -> None:
    origin = {"Origin": "https://cards.example"}
    game = ann.new_game(deal={"seed": 1})
    for path in (f"/games/{game['id']}", "/schema/openapi.json", f"/games/{GAME}", "/rulesets"):
        response = ann.client.get(path, headers=origin)
        assert response.headers.get("access-control-allow-origin") in {"*", "https://cards.example"}, path
    exposed = ann.client.get(f"/games/{game['id']}", headers=origin).headers["access-control-expose-headers"]
    names = {name.strip().lower() for name in exposed.split(",")}
    assert {"etag", "api-version", "link", "idempotent-replayed", "retry-after"} <= names


def test_health_says_the_database_answers(client: httpx.Client) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "up"}


def test_options_lists_every_method_of_a_path(client: httpx.Client) -> None:
    """Several handlers share ``/players/me/tokens``: ``OPTIONS`` names all their methods."""
    assert client.options("/players/me/tokens").headers["allow"] == "DELETE, GET, OPTIONS, POST"
    assert client.options("/players/me").headers["allow"] == "DELETE, GET, OPTIONS, PATCH"
