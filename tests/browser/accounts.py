"""The other side of a browser test: players who act through the API (registered there, or the
browser's own player borrowed by its token), for what other people do while the page is watched."""

from __future__ import annotations

from typing import Any

import httpx

NEWEST = {"Api-Version": "2026-12-05"}


class Account:
    """A player driven through the API of the server at ``url``, in the page's API version."""

    def __init__(self, url: str, player: dict[str, Any]) -> None:
        self.url = url
        self.id: str = player["id"]
        self.name: str = player["name"]
        self.token: str = player["token"]

    @classmethod
    def register(cls, url: str, name: str) -> Account:
        response = httpx.post(f"{url}/players", json={"name": name}, headers=NEWEST, timeout=10)
        assert response.status_code == 201, response.text
        return cls(url, response.json())

    @property
    def headers(self) -> dict[str, str]:
        return {**NEWEST, "Authorization": f"Bearer {self.token}"}

    def post(self, path: str, body: dict[str, Any] | None = None, status: int = 201) -> Any:
        response = httpx.post(f"{self.url}{path}", json=body, headers=self.headers, timeout=30)
        assert response.status_code == status, (path, response.text)
        return response.json()

    def get(self, path: str, **params: Any) -> Any:
        response = httpx.get(f"{self.url}{path}", params=params, headers=self.headers, timeout=30)
        assert response.status_code == 200, (path, response.text)
        return response.json()

    def move(self, game_id: str, move: dict[str, Any]) -> Any:
        return self.post(f"/games/{game_id}/moves", move, status=200)


def rated_race(winner: Account, loser: Account) -> dict[str, Any]:
    """A rated race of two, placed as asked: both resign on the cards they were dealt, the loser
    after one draw more (equal cards: fewer moves places first). The finished race."""
    race = winner.post("/races", {"maxEntrants": 2, "rated": True, "ruleset": "classic"})
    loser.post(f"/races/{race['id']}/entries")
    games = {e["player"]["id"]: e["game"] for e in winner.post(f"/races/{race['id']}/start", status=200)["entrants"]}
    loser.move(games[loser.id], {"type": "draw"})
    loser.move(games[loser.id], {"type": "resign"})
    winner.move(games[winner.id], {"type": "resign"})
    finished: dict[str, Any] = winner.get(f"/races/{race['id']}")
    assert finished["status"] == "finished", finished
    assert {e["player"]["id"]: e["place"] for e in finished["entrants"]} == {winner.id: 1, loser.id: 2}
    return finished
