"""The legal-move counts along fixed lines match the golden file (see tests/unit/perft.py)."""

from __future__ import annotations

import json

import pytest

from domain import ALL_RULESETS, Ruleset

from .perft import GOLDEN, MAX_STEPS, SEEDS, compute, line, render

GOLDEN_TABLE = json.loads(GOLDEN.read_text(encoding="utf-8"))


def test_golden_file_covers_every_ruleset_and_seed() -> None:
    assert GOLDEN_TABLE["maxSteps"] == MAX_STEPS
    assert set(GOLDEN_TABLE["rulesets"]) == {ruleset.key for ruleset in ALL_RULESETS}
    for seeds in GOLDEN_TABLE["rulesets"].values():
        assert set(seeds) == {str(seed) for seed in SEEDS}


@pytest.mark.parametrize("ruleset", ALL_RULESETS, ids=lambda ruleset: ruleset.key)
def test_legal_move_counts_match_the_golden_lines(ruleset: Ruleset) -> None:
    golden = GOLDEN_TABLE["rulesets"][ruleset.key]
    for seed in SEEDS:
        assert line(ruleset, seed) == golden[str(seed)], (
            f"{ruleset.key} seed {seed}: rerun `python -m tests.unit.perft --write` only if the change is intended"
        )


def test_golden_file_is_exactly_what_the_generator_writes() -> None:
    assert GOLDEN.read_text(encoding="utf-8") == render(compute())
