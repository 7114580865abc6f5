"""The lean path of a move (service.http.move_route) answers exactly as Litestar's route does.

Each case is sent twice, on twin games (same player, same deal, the server's clock standing
still): once as a client sends it, which the lean path answers, and once with a query parameter
the route ignores (``?via=litestar``), which sends it through Litestar's route. Status, headers
(all but ``date``) and body must be the same, the game id aside.
"""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.conftest import Player

DEAL = {"ruleset": "open-runs", "deal": {"seed": 11}}


def _twins(player: Player) -> tuple[str, str]:
    return player.new_game(**DEAL)["id"], player.new_game(**DEAL)["id"]


def _send(client: httpx.Client, game_id: str, via_litestar: bool, body: bytes, headers: dict[str, str] | list[tuple[str, str]]) -> httpx.Response:
    url = f"/games/{game_id}/moves" + ("?via=litestar" if via_litestar else "")
    return client.post(url, content=body, headers=headers)


def _same(lean: httpx.Response, litestar: httpx.Response, lean_id: str, litestar_id: str) -> None:
    assert lean.status_code == litestar.status_code, (lean.text, litestar.text)
    heads = [(k, v) for k, v in lean.headers.multi_items() if k != "date"]
    theirs = [(k, v) for k, v in litestar.headers.multi_items() if k != "date"]
    assert heads == theirs
    assert lean.content == litestar.content.replace(litestar_id.encode(), lean_id.encode())


def _both(client: httpx.Client, ids: tuple[str, str], body: bytes, headers: Any) -> httpx.Response:
    lean = _send(client, ids[0], False, body, headers)
    litestar = _send(client, ids[1], True, body, headers)
    _same(lean, litestar, *ids)
    return lean


JSON = {"Content-Type": "application/json"}


def test_moves_and_their_refusals_are_answered_alike(clocked: httpx.Client, clock: Any) -> None:
    ann, bob = Player(clocked, "Ann"), Player(clocked, "Bob")
    ids = _twins(ann)
    auth = {**ann.auth, **JSON}
    for _ in range(14):  # the stock runs out (draw three): recycles too
        stock = _both(clocked, ids, b'{"type": "draw"}', auth).json()["game"]["table"]["stock"]["count"]
        if stock == 0:
            assert _both(clocked, ids, b'{"type":"recycle"}', auth).status_code == 200
    version = _both(clocked, ids, b'{"type":"draw"}', auth).json()["game"]["version"]
    cases: list[tuple[bytes, Any, int]] = [
        (b'{"type":"draw"}', {**auth, "If-Match": f'"{version}"'}, 200),
        (b'{"type":"draw"}', {**auth, "If-Match": '"1"'}, 412),
        (b'{"type":"draw"}', {**auth, "If-Match": "seven"}, 400),
        (b'{"type":"move","card":"KS","to":"foundation"}', auth, 422),
        (b'{"type":"move","card":"KS"}', auth, 400),
        (b'{"type":"jump"}', auth, 400),
        (b'{"type":"draw","type":"resign"}', auth, 400),
        (b'{"type":"draw"', auth, 400),
        (b"", auth, 400),
        (b"[]", auth, 400),
        (b'{"type":"draw"}', {**ann.auth, "Content-Type": "text/plain"}, 415),
        (b'{"type":"draw"}', {**ann.auth, "Content-Type": "application/problem+json; charset=utf-8"}, 200),
        (b'{"type":"draw"}', JSON, 401),
        (b'{"type":"draw"}', {**JSON, "Authorization": "Basic abc"}, 401),
        (b'{"type":"draw"}', {**JSON, "Authorization": "Bearer not-a-token"}, 401),
        (b'{"type":"draw"}', {**JSON, **bob.auth}, 403),
        (b'{"type":"draw"}', [("Authorization", f"Bearer {ann.token}"), ("Authorization", f"Bearer {bob.token}"),
                              ("Content-Type", "application/json")], 400),
        (b'{"type":"draw"}', {**auth, "Idempotency-Key": "k1"}, 200),
        (b'{"type":"draw"}', {**auth, "Idempotency-Key": "k1"}, 200),  # replayed
        (b'{"type":"recycle"}', {**auth, "Idempotency-Key": "k1"}, 400),  # the key with another move
        (b'{"type":"draw"}', {**auth, "Idempotency-Key": "two words"}, 400),
        (b'{"type":"draw"}', {**auth, "Origin": "https://example.org"}, 200),  # CORS headers: Litestar's
    ]
    for body, headers, status in cases:
        assert _both(clocked, ids, body, headers).status_code == status, (body, headers)
    replayed = _send(clocked, ids[0], False, b'{"type":"draw"}', {**auth, "Idempotency-Key": "k1"})
    assert replayed.headers["idempotent-replayed"] == "true"
    assert _both(clocked, ids, b'{"type":"resign"}', auth).status_code == 200
    assert _both(clocked, ids, b'{"type":"draw"}', auth).status_code == 409


def test_an_unknown_game_is_a_404_on_both_paths(clocked: httpx.Client) -> None:
    ann = Player(clocked, "Ann")
    missing = "0b9d6c1e-2f3a-4b5c-8d7e-9f0a1b2c3d4e"
    lean = _send(clocked, missing, False, b'{"type":"draw"}', {**ann.auth, **JSON})
    litestar = _send(clocked, missing, True, b'{"type":"draw"}', {**ann.auth, **JSON})
    _same(lean, litestar, missing, missing)
    assert lean.status_code == 404
    assert lean.headers["content-type"] == "application/problem+json"
