"""Pool numbers are published addresses: the shipped pools keep every deal where it was.

The fingerprints below were taken from the pools as first published (commits 2f98147,
ffb7928, 63882c8). A pool may grow at its end; no existing number may name another deal, and
no stored line may change (a shorter line would be a new pool version, not an edit).
"""

from __future__ import annotations

import hashlib
import json

import pytest

from service.deals.deal_pools import deal_pool_path, load_deal_pool

PUBLISHED = {  # ruleset: (deals published, sha256 of their seeds in order, sha256 of the deal records)
    "open-runs": (1500, "b06d0263a057cba2", "1a4b5318b0fc6442"),
    "classic": (500, "b118b01381e2ff92", "0489ce108b858fff"),
    "draw-one": (500, "f2ba5b9192c3fbc6", "6815e31a34e7396a"),
}


def _digest(value: object) -> str:
    return hashlib.sha256(
        value.encode() if isinstance(value, str) else json.dumps(value, sort_keys=True).encode()
    ).hexdigest()[:16]


@pytest.mark.parametrize("ruleset_id", sorted(PUBLISHED))
def test_every_published_pool_number_names_the_same_deal(ruleset_id: str) -> None:
    count, seeds_digest, deals_digest = PUBLISHED[ruleset_id]
    deals = json.loads(deal_pool_path(ruleset_id).read_text())["deals"]
    assert len(deals) >= count
    published = deals[:count]
    assert _digest(",".join(str(deal["seed"]) for deal in published)) == seeds_digest
    assert _digest(published) == deals_digest


@pytest.mark.parametrize("ruleset_id", sorted(PUBLISHED))
def test_the_pool_counts_are_sound_verdicts(ruleset_id: str) -> None:
    """A seed the pool counts as lost was proven lost by the sound solver (domain.solver@2 or
    later); the first solver's "lost" was no proof, so its verdicts may count none."""
    pool = load_deal_pool(ruleset_id)
    assert pool is not None
    assert pool.verdicts is not None
    name, _, version = pool.verdicts.solver.partition("@")
    assert name == "domain.solver"
    assert int(version or 1) >= 2 or pool.lost == 0
    assert len(pool.verdicts.lost) == pool.lost
    assert pool.won == pool.size + len(pool.verdicts.won_outside_pool)
