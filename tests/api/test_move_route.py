"""``POST /games/{id}/moves`` has one route (service.http.move_route): every request to that path,
well-formed or not, is answered by it (straight, or through Litestar's router when it needs CORS or
is spelled otherwise), in the service's own words, and changes the game only
when it is a move the game's player may make."""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.conftest import Player

JSON = {"Content-Type": "application/json"}
CURRENT = "the game's version when the request is sent"


def _move(client: httpx.Client, game_id: str, body: bytes, headers: Any) -> httpx.Response:
    return client.post(f"/games/{game_id}/moves", content=body, headers=headers)


def _version(client: httpx.Client, game_id: str) -> int:
    version: int = client.get(f"/games/{game_id}").json()["version"]
    return version


def _code(response: httpx.Response) -> str | None:
    if response.headers.get("content-type") != "application/problem+json":
        return None
    code: str = response.json()["code"]
    return code


def test_moves_and_their_refusals_each_get_their_own_answer(client: httpx.Client) -> None:
    ann, bob = Player(client, "Ann"), Player(client, "Bob")
    game_id = ann.new_game(ruleset="open-runs", deal={"seed": 11})["id"]
    auth = {**ann.auth, **JSON}
    _move(client, game_id, b'{"type":"draw"}', auth)
    cases: list[tuple[bytes, Any, int, str | None]] = [
        (b'{"type":"draw"}', {**auth, "If-Match": CURRENT}, 200, None),
        (b'{"type":"draw"}', {**auth, "If-Match": '"1"'}, 412, "version_conflict"),
        (b'{"type":"draw"}', {**auth, "If-Match": "seven"}, 400, "invalid_request"),
        (b'{"type":"move","card":"KS","to":"foundation"}', auth, 422, "illegal_move"),
        (b'{"type":"move","card":"KS"}', auth, 400, "invalid_request"),
        (b'{"type":"jump"}', auth, 400, "invalid_request"),
        (b'{"type":"draw","type":"resign"}', auth, 400, "invalid_request"),
        (b'{"type":"draw"', auth, 400, "invalid_request"),
        (b"", auth, 400, "invalid_request"),
        (b"[]", auth, 400, "invalid_request"),
        (b'{"type":"draw"}', {**ann.auth, "Content-Type": "text/plain"}, 415, "unsupported_media_type"),
        (b'{"type":"draw"}', {**ann.auth, "Content-Type": "application/problem+json; charset=utf-8"}, 200, None),
        (b'{"type":"draw"}', JSON, 401, "unauthorized"),
        (b'{"type":"draw"}', {**JSON, "Authorization": "Basic abc"}, 401, "unauthorized"),
        (b'{"type":"draw"}', {**JSON, "Authorization": "Bearer not-a-token"}, 401, "unauthorized"),
        (b'{"type":"draw"}', {**JSON, **bob.auth}, 403, "forbidden"),
        (b'{"type":"draw"}', [("Authorization", f"Bearer {ann.token}"), ("Authorization", f"Bearer {bob.token}"),
                              ("Content-Type", "application/json")], 400, "invalid_request"),
        (b'{"type":"draw"}', {**auth, "Idempotency-Key": "two words"}, 400, "invalid_request"),
        (b'{"type":"draw"' + b" " * 100_000 + b"}", auth, 413, "payload_too_large"),
    ]
    for body, headers, status, code in cases:
        # without an Origin header a move skips the router (MoveDispatch); with one, it goes through
        # Litestar's router and CORS layer: the same route, the same answer
        answers = []
        for origin in ([], [("Origin", "https://table.example")]):
            before = _version(client, game_id)
            sent = [(name, f'"{before}"' if value == CURRENT else value) for name, value in _pairs(headers)]
            response = _move(client, game_id, body, [*sent, *origin])
            assert (response.status_code, _code(response)) == (status, code), (body, headers, origin, response.text)
            assert _version(client, game_id) == before + (1 if status == 200 else 0), (body, headers, origin)
            assert ("access-control-allow-origin" in response.headers) == bool(origin)
            answers.append(response.json().get("detail") if code else None)
        assert answers[0] == answers[1], (body, headers)


def _pairs(headers: Any) -> list[tuple[str, str]]:
    return list(headers.items()) if isinstance(headers, dict) else list(headers)


def test_an_idempotency_key_replays_the_first_reply_byte_for_byte(client: httpx.Client) -> None:
    ann = Player(client, "Ann")
    game_id = ann.new_game(ruleset="open-runs", deal={"seed": 11})["id"]
    auth = {**ann.auth, **JSON, "Idempotency-Key": "k1"}
    first = _move(client, game_id, b'{"type":"draw"}', auth)
    again = _move(client, game_id, b'{"type":"draw"}', auth)
    assert (first.status_code, again.status_code) == (200, 200)
    assert again.content == first.content
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    other = _move(client, game_id, b'{"type":"recycle"}', auth)
    assert (other.status_code, _code(other)) == (400, "invalid_request")
    assert _version(client, game_id) == 2


def test_the_path_is_checked_as_written(client: httpx.Client) -> None:
    ann = Player(client, "Ann")
    game_id = ann.new_game(ruleset="open-runs", deal={"seed": 11})["id"]
    auth = {**ann.auth, **JSON}
    for path in (f"/games/{game_id}/moves/", f"/games/urn:uuid:{game_id}/moves", "/games/1234/moves",
                 "/games/0b9d6c1e-2f3a-4b5c-8d7e-9f0a1b2c3d4e/moves"):
        response = client.post(path, content=b'{"type":"draw"}', headers=auth)
        assert (response.status_code, _code(response)) == (404, "not_found"), path
    assert "1234" in client.post("/games/1234/moves", content=b"{}", headers=auth).json()["detail"]
    assert _version(client, game_id) == 1


def test_other_methods_are_refused_and_a_browser_may_ask_first(client: httpx.Client) -> None:
    ann = Player(client, "Ann")
    game_id = ann.new_game(ruleset="open-runs", deal={"seed": 11})["id"]
    for method in ("GET", "PUT", "DELETE", "PROPFIND"):
        response = client.request(method, f"/games/{game_id}/moves", headers=ann.auth)
        assert (response.status_code, _code(response)) == (405, "method_not_allowed"), method
        assert "POST" in response.headers["allow"]
    options = client.options(f"/games/{game_id}/moves")
    assert (options.status_code, options.headers["allow"]) == (204, "OPTIONS, POST")
    origin = "https://client.example"
    preflight = client.options(f"/games/{game_id}/moves", headers={
        "Origin": origin, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type, if-match",
    })
    assert preflight.status_code in (200, 204)
    assert "POST" in preflight.headers["access-control-allow-methods"]


def test_a_body_sent_in_chunks_is_read_whole(client: httpx.Client) -> None:
    ann = Player(client, "Ann")
    game_id = ann.new_game(ruleset="open-runs", deal={"seed": 11})["id"]

    def chunks() -> Any:
        yield b'{"type":'
        yield b'"draw"}'

    response = client.post(f"/games/{game_id}/moves", content=chunks(), headers={**ann.auth, **JSON})
    assert response.status_code == 200, response.text
    assert response.json()["game"]["version"] == 2
    assert response.headers["etag"] == '"2"'


def test_the_document_describes_the_route(client: httpx.Client) -> None:
    document = client.get("/schema/openapi.json").json()
    operation = document["paths"]["/games/{game_id}/moves"]["post"]
    assert operation["operationId"] == "makeMove"
    assert {"200", "400", "401", "403", "404", "409", "412", "413", "415", "422"} <= set(operation["responses"])
    assert "MoveResult" in document["components"]["schemas"]
