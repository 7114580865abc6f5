"""docs/deals.md's test vectors hold: the page is parsed here, so it cannot drift from the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from domain import ALL_RULESETS, CODES, MAX_SEED, Draw, Ruleset, apply, deal, replay, shuffled_deck
from domain.deal import SplitMix64

DOC = Path(__file__).resolve().parents[2] / "docs" / "deals.md"
TEXT = DOC.read_text(encoding="utf-8")
DOCUMENTED_SEEDS = {0, 1, 42, 123456789, 2**53 - 1}
GROUPS = (("reserve", 13), ("foundation", 1), ("tableau", 4), ("stock", 34))


def documented_decks() -> dict[int, list[str]]:
    """Each ``seed N`` block: its reserve, foundation, tableau and stock lines, joined in deal order."""
    decks: dict[int, list[str]] = {}
    pattern = r"^seed (\d+)\n" + "".join(rf"  {name} +([^\n]+)\n" for name, _ in GROUPS)
    for match in re.finditer(pattern, TEXT, flags=re.MULTILINE):
        seed = int(match.group(1))
        assert seed not in decks, f"seed {seed} is listed twice"
        deck: list[str] = []
        for (name, size), line in zip(GROUPS, match.groups()[1:], strict=True):
            cards = line.split()
            assert len(cards) == size, f"seed {seed}: {name} lists {len(cards)} cards, not {size}"
            deck += cards
        decks[seed] = deck
    return decks


def documented_line(label: str) -> tuple[int, list[str]]:
    match = re.search(rf"^{label} seed (\d+): ([^\n]+)$", TEXT, flags=re.MULTILINE)
    assert match, f"docs/deals.md has no '{label} seed N:' line"
    return int(match.group(1)), match.group(2).split()


# ---------------------------------------------------------------- an independent SplitMix64, plain ints

TWO_64 = 2**64


def independent_step(state: int) -> tuple[int, int]:
    """One SplitMix64 step on plain ints: (the new state, the output)."""
    state = (state + 0x9E3779B97F4A7C15) % TWO_64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % TWO_64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % TWO_64
    return state, z ^ (z >> 31)


def independent_outputs(seed: int, count: int) -> list[int]:
    outputs = []
    state = seed % TWO_64
    for _ in range(count):
        state, output = independent_step(state)
        outputs.append(output)
    return outputs


class IndependentDraws:
    """Bounded draws as the doc's 64-bit form states them: r = (0 - bound) mod bound, wrapped."""

    def __init__(self, seed: int) -> None:
        self.state = seed % TWO_64
        self.used = 0

    def next(self) -> int:
        self.used += 1
        self.state, output = independent_step(self.state)
        return output

    def below(self, bound: int) -> int:
        r = ((0 - bound) % TWO_64) % bound
        while True:
            value = self.next()
            if r == 0 or value < (0 - r) % TWO_64:
                return value % bound


def independent_deck(seed: int) -> list[str]:
    deck = [rank + suit for suit in "SHDC" for rank in "A23456789TJQK"]
    draws = IndependentDraws(seed)
    for i in range(51, 0, -1):
        j = draws.below(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


# ---------------------------------------------------------------- the tests


def test_the_doc_lists_every_promised_seed() -> None:
    assert set(documented_decks()) == DOCUMENTED_SEEDS
    assert max(DOCUMENTED_SEEDS) == MAX_SEED


@pytest.mark.parametrize("seed", sorted(DOCUMENTED_SEEDS))
def test_documented_deal_matches_shuffled_deck(seed: int) -> None:
    documented = documented_decks()[seed]
    assert sorted(documented) == sorted(CODES), "a documented deal is not 52 distinct cards"
    assert [CODES[card] for card in shuffled_deck(seed)] == documented


@pytest.mark.parametrize("seed", sorted(DOCUMENTED_SEEDS))
def test_documented_deal_matches_an_independent_shuffle(seed: int) -> None:
    assert independent_deck(seed) == documented_decks()[seed]


def test_documented_splitmix64_outputs_match_the_generator_and_an_independent_one() -> None:
    seed, words = documented_line("splitmix64")
    assert seed == 0
    assert len(words) == 3
    documented = [int(word, 16) for word in words]
    rng = SplitMix64(seed)
    assert [rng.next() for _ in range(3)] == documented
    assert independent_outputs(seed, 3) == documented


def test_documented_swap_indexes_are_the_shuffles_draws() -> None:
    seed, words = documented_line("swaps")
    documented = [int(word) for word in words]
    assert len(documented) == 51
    rng = SplitMix64(seed)
    assert [rng.below(i + 1) for i in range(51, 0, -1)] == documented
    draws = IndependentDraws(seed)
    assert [draws.below(i + 1) for i in range(51, 0, -1)] == documented
    deck = list(range(52))
    for i, j in zip(range(51, 0, -1), documented, strict=True):
        deck[i], deck[j] = deck[j], deck[i]
    assert tuple(deck) == shuffled_deck(seed)


@pytest.mark.parametrize("seed", [0, 1, 2**32 - 1, 2**32, 2**52 + 12345, MAX_SEED])
def test_generator_matches_the_independent_one_over_many_outputs(seed: int) -> None:
    rng = SplitMix64(seed)
    assert [rng.next() for _ in range(200)] == independent_outputs(seed, 200)


@pytest.mark.parametrize(
    "bound",
    # powers of two (nothing rejected), deal sizes, and huge bounds where about half the draws are redrawn
    [1, 2, 32, 52, 2**32, 3 * 2**62, 2**63 + 1, 2**64 - 1, 2**64],
)
def test_bounded_draws_reject_exactly_as_documented(bound: int) -> None:
    rng = SplitMix64(1234)
    draws = IndependentDraws(1234)
    for _ in range(40):
        assert rng.below(bound) == draws.below(bound)
    if bound == 2**63 + 1:
        assert draws.used > 50, "these draws should have needed redraws"


@pytest.mark.parametrize("seed", [7, 99, 2024, 31337, 2**40 + 3])
def test_shuffle_matches_an_independent_one_on_undocumented_seeds(seed: int) -> None:
    assert [CODES[card] for card in shuffled_deck(seed)] == independent_deck(seed)


@pytest.mark.parametrize("ruleset", ALL_RULESETS, ids=lambda ruleset: ruleset.key)
def test_the_table_follows_the_documented_layout(ruleset: Ruleset) -> None:
    deck = shuffled_deck(0)
    state = replay([deal(ruleset, deck, {"source": "seed", "seed": 0})])
    assert state.reserve == deck[0:13]
    assert CODES[state.reserve[-1]] == "9D"
    assert state.foundation_cards(0) == (deck[13],)
    assert CODES[deck[13]] == "8S"
    assert "A23456789TJQK"[state.base_rank] == "8"
    assert list(state.tableau) == [(card,) for card in deck[14:18]]
    assert state.stock[-1] == deck[18]
    assert tuple(reversed(state.stock)) == deck[18:]
    after, _ = apply(state, Draw())
    drawn = [CODES[card] for card in after.waste]
    if ruleset.draw_count == 3:
        assert drawn == ["3D", "5S", "AD"]
    else:
        assert drawn == ["3D"]
