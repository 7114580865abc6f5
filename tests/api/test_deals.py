from datetime import date, timedelta

import httpx
import pytest

from domain import CODES, get_ruleset, shuffled_deck
from service.deals.daily import candidate_seed
from service.deals.deal_pools import load_deal_pool
from tests.support import today

from .conftest import Player

_SHIPPED = load_deal_pool("open-runs")
assert _SHIPPED is not None, "the repository ships an open-runs pool"
POOL = _SHIPPED


def test_the_pool_summary_says_how_it_was_made(client: httpx.Client) -> None:
    pools = {p["ruleset"]["id"]: p for p in client.get("/deals/pool").json()["pools"]}
    summary = pools["open-runs"]
    assert summary["size"] == POOL.size
    assert summary["won"] + summary["lost"] + summary["undecided"] == summary["seedsTried"]
    assert summary["lineLength"]["q1"] <= summary["lineLength"]["median"] <= summary["lineLength"]["q3"]
    assert summary["budgetSeconds"] > 0


def test_a_pool_deal_is_described_without_its_line_or_seed(client: httpx.Client) -> None:
    response = client.get("/deals/pool/1")
    assert response.status_code == 200
    body = response.json()
    assert body == {
        "pool": 1, "ruleset": {"id": "open-runs", "version": 1}, "verified": True, "lineLength": POOL.deal(1).length,
        "plays": 0, "wins": 0,
    }
    assert client.get(f"/deals/pool/{POOL.size + 1}").status_code == 404
    assert client.get("/deals/pool/0").status_code == 400
    assert client.get("/deals/pool/1?ruleset=klondike").status_code == 400


def test_a_game_from_the_pool_deals_that_seed_without_saying_it(ann: Player) -> None:
    game = ann.new_game(deal={"pool": 1})
    assert game["deal"] == {"source": "pool", "pool": 1}
    deck = [CODES[c] for c in shuffled_deck(POOL.deal(1).seed)]
    assert game["table"]["tableau"] == [[c] for c in deck[14:18]]
    events = ann.client.get(f"/games/{game['id']}/events").json()["events"]
    assert "seed" not in events[0]["data"]["deal"]


def test_the_default_open_runs_deal_comes_from_the_pool(ann: Player) -> None:
    game = ann.new_game()
    assert game["deal"]["source"] == "pool"
    assert 1 <= game["deal"]["pool"] <= POOL.size


@pytest.mark.parametrize(
    ("deal", "message"),
    [
        ({"pool": 10**6}, "pool deals run from 1 to"),
        ({"pool": 0}, "'deal.pool' must be a pool deal number, 1 or more, not 0"),
    ],
)
def test_a_pool_number_out_of_range_is_400(ann: Player, deal: dict, message: str) -> None:
    response = ann.client.post("/games", json={"deal": deal}, headers=ann.auth)
    assert response.status_code == 400
    assert message in response.json()["detail"]


def test_a_ruleset_without_a_pool_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from service.deals import choice as deals
    from service.errors import BadRequest

    monkeypatch.setattr(deals, "load_deal_pool", lambda ruleset_id: None)
    with pytest.raises(BadRequest, match="classic@1 has no verified deal pool on this server"):
        deals.deal_pool_of(get_ruleset("classic"))


def test_the_daily_deal_is_the_same_for_everyone_and_in_no_pool(client: httpx.Client, ann: Player, bob: Player) -> None:
    daily = client.get("/deals/daily").json()
    assert daily["date"] == today().isoformat()
    assert daily["ruleset"] == "open-runs"
    assert daily["verified"] is True
    assert "pool" not in daily
    assert "seed" not in daily
    assert client.get(f"/deals/daily/{today().isoformat()}").json() == daily
    first = ann.new_game(deal={"daily": "today"})
    second = bob.new_game(deal={"daily": today().isoformat()})
    assert first["table"] == second["table"]
    assert first["deal"] == {"source": "daily", "daily": today().isoformat(), "practice": False}


def test_the_daily_candidates_depend_on_the_server_secret() -> None:
    days = [date(2026, 1, 1) + timedelta(days=i) for i in range(40)]
    with_one = [candidate_seed("one", "open-runs", d, 0) for d in days]
    with_other = [candidate_seed("other", "open-runs", d, 0) for d in days]
    assert not set(with_one) & set(with_other)
    assert len(set(with_one)) == 40
    assert all(0 <= seed < 2**53 for seed in with_one)
    assert with_one == [candidate_seed("one", "open-runs", d, 0) for d in days]  # stable
    assert candidate_seed("one", "open-runs", days[0], 1) not in with_one  # the next candidate of a date differs
    assert not set(with_one) & {item.seed for item in POOL.deals}  # never a pool deal


@pytest.mark.parametrize(
    ("text", "message"),
    [("2026-13-01", "not a date"), ("yesterday", "not a date"), ("tomorrow", "not a date"), ("1999-01-01", "go back")],
)
def test_bad_or_far_dates_are_400(client: httpx.Client, text: str, message: str) -> None:
    response = client.get(f"/deals/daily/{text}")
    assert response.status_code == 400
    assert message in response.json()["detail"]


def test_a_future_daily_deal_is_not_out_yet(client: httpx.Client, ann: Player) -> None:
    tomorrow = (today() + timedelta(days=1)).isoformat()
    assert "not out yet" in client.get(f"/deals/daily/{tomorrow}").json()["detail"]
    response = ann.client.post("/games", json={"deal": {"daily": tomorrow}}, headers=ann.auth)
    assert response.status_code == 400


def test_the_daily_deal_is_played_under_open_runs(ann: Player) -> None:
    response = ann.client.post("/games", json={"ruleset": "classic", "deal": {"daily": "today"}}, headers=ann.auth)
    assert response.status_code == 400
    assert "open-runs" in response.json()["detail"]


def test_solver_hints_give_a_winning_move_and_mark_the_game_assisted(ann: Player, bob: Player) -> None:
    game = ann.new_game(deal={"pool": 1})
    path = f"/games/{game['id']}/hints?solver=true"
    assert ann.client.get(path).status_code == 401
    assert ann.client.get(path, headers=bob.auth).status_code == 403
    response = ann.client.get(path, headers=ann.auth)
    assert response.status_code == 200, response.text
    solver = response.json()["solver"]
    assert solver["result"] in {"won", "unknown"}
    if solver["result"] == "won":
        legal = ann.client.get(f"/games/{game['id']}/legal-moves").json()["moves"]
        assert solver["move"] in legal
    view = ann.client.get(f"/games/{game['id']}").json()
    assert view["assisted"] is True
    assert view["version"] == 2
    events = ann.client.get(f"/games/{game['id']}/events").json()["events"]
    assert events[-1]["type"] == "SolverHintUsed"
    ann.client.get(path, headers=ann.auth)  # asking again records nothing more
    assert ann.client.get(f"/games/{game['id']}").json()["version"] == 2
    plain = ann.client.get(f"/games/{game['id']}/hints").json()
    assert "solver" not in plain
