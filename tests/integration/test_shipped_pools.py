"""The pools shipped in the repository: every stored winning line replays to a win."""

import json

import pytest

from service.deals.deal_pools import deal_pool_path
from service.deals.pool_verify import verify_document

MINIMUM_SIZE = {"open-runs": 1500, "classic": 500, "draw-one": 500}


@pytest.mark.parametrize("ruleset_id", sorted(MINIMUM_SIZE))
def test_the_shipped_pool_replays_to_wins_and_is_big_enough(ruleset_id: str) -> None:
    path = deal_pool_path(ruleset_id)
    assert path.exists(), f"no pool shipped for {ruleset_id}: run `make pools`"
    document = json.loads(path.read_text())
    assert verify_document(document) == []
    assert len(document["deals"]) >= MINIMUM_SIZE[ruleset_id]
