import httpx
import pytest

from tests.support import assert_problem

from .conftest import Player


@pytest.mark.smoke
def test_a_new_player_gets_a_token_shown_once(client: httpx.Client) -> None:
    response = client.post("/players", json={"name": "  Ann   Lee "})
    assert response.status_code == 201
    body = response.json()
    assert body["name"] == "Ann Lee"
    assert len(body["token"]) >= 32
    assert response.headers["location"] == f"/players/{body['id']}"
    profile = client.get(f"/players/{body['id']}")
    assert profile.status_code == 200
    assert profile.json()["name"] == "Ann Lee"
    assert "token" not in profile.json()
    assert body["token"] not in profile.text


@pytest.mark.parametrize("name", ["", "   ", "x" * 41, "bad\u0007bell"])
def test_a_player_name_must_be_1_to_40_visible_characters(client: httpx.Client, name: str) -> None:
    response = client.post("/players", json={"name": name})
    assert_problem(response, 400, "invalid_request")


def test_an_unknown_player_is_404(client: httpx.Client) -> None:
    response = client.get("/players/00000000-0000-4000-8000-000000000000")
    assert_problem(response, 404, "not_found")


def test_rulesets_list_their_parameters(client: httpx.Client) -> None:
    response = client.get("/rulesets")
    assert response.status_code == 200
    rulesets = {r["id"]: r for r in response.json()["rulesets"]}
    assert set(rulesets) == {"classic", "draw-one", "open-runs"}
    assert rulesets["draw-one"]["drawCount"] == 1
    assert rulesets["draw-one"]["recycle"] == "after-progress"
    assert rulesets["classic"]["foundationReturns"] is True
    assert rulesets["classic"]["tableauMoves"] == "end-or-whole-column"
    one = client.get("/rulesets/open-runs")
    assert one.status_code == 200
    assert one.json()["key"] == "open-runs@1"


def test_an_unknown_ruleset_is_404(client: httpx.Client) -> None:
    response = client.get("/rulesets/klondike")
    assert response.status_code == 404
    assert "classic, draw-one, open-runs" in response.json()["detail"]


def test_tokens_are_stored_only_as_hashes(client: httpx.Client, ann: Player, clean_database: str) -> None:
    import psycopg

    with psycopg.connect(clean_database) as conn:
        stored = conn.execute("SELECT token_hash FROM tokens WHERE player_id = %s", (ann.id,)).fetchone()
    assert stored is not None
    assert ann.token.encode() not in bytes(stored[0])
    assert len(bytes(stored[0])) == 32


def test_every_hosted_version_of_a_ruleset_can_be_read(client: httpx.Client) -> None:
    listed = {(r["id"], r["version"]): r for r in client.get("/rulesets").json()["rulesets"]}
    for (ruleset_id, version), view in listed.items():
        response = client.get(f"/rulesets/{ruleset_id}/versions/{version}")
        assert response.status_code == 200, response.text
        assert response.json() == view
    missing = client.get("/rulesets/classic/versions/99")
    assert_problem(missing, 404, "not_found")
    assert "hosted versions are 1" in missing.json()["detail"]
    unknown = client.get("/rulesets/klondike/versions/1")
    assert unknown.status_code == 404
    assert "classic, draw-one, open-runs" in unknown.json()["detail"]
    for bad in ("0", "x", "1.0", "-1"):
        assert client.get(f"/rulesets/classic/versions/{bad}").status_code in (400, 404)


def test_a_game_names_the_ruleset_version_it_replays_under(client: httpx.Client, ann: Player) -> None:
    game = ann.new_game(ruleset="draw-one", deal={"seed": 5})
    rules = client.get(f"/rulesets/{game['ruleset']['id']}/versions/{game['ruleset']['version']}").json()
    assert rules["drawCount"] == 1
    assert rules["key"] == f"draw-one@{game['ruleset']['version']}"
