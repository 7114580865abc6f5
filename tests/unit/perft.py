"""Golden "perft" lines: the number of legal moves along a fixed pseudo-random line.

For seeds 1..20 under each hosted ruleset: deal the seed, then for up to 150 steps record
``len(legal_moves(state))`` and play the move ``SplitMix64(seed).below(n)`` picks among the
``n`` legal moves other than resign (undo included), stopping when the game ends. Any change
to the legal-move generator, the deal or the rules shows up as a diff of the golden file.

    python -m tests.unit.perft           # compare with the golden file (exit 1 on a difference)
    python -m tests.unit.perft --write   # rewrite the golden file
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from domain import ALL_RULESETS, Resign, Ruleset, apply, deal, legal_moves, replay, shuffled_deck
from domain.deal import SplitMix64

GOLDEN = Path(__file__).parent / "golden" / "perft.json"
SEEDS = range(1, 21)
MAX_STEPS = 150
FORMAT = 1


def line(ruleset: Ruleset, seed: int) -> dict[str, Any]:
    """The legal-move counts along the seed's fixed line, and the status where it stops."""
    state = replay([deal(ruleset, shuffled_deck(seed), {"source": "seed", "seed": seed})])
    rng = SplitMix64(seed)
    counts: list[int] = []
    for _ in range(MAX_STEPS):
        if not state.playing:
            break
        moves = legal_moves(state)
        counts.append(len(moves))
        choices = [move for move in moves if not isinstance(move, Resign)]
        if not choices:
            break
        state, _ = apply(state, choices[rng.below(len(choices))])
    return {"counts": counts, "status": state.status.value}


def compute() -> dict[str, Any]:
    return {
        "format": FORMAT,
        "seeds": [SEEDS.start, SEEDS.stop - 1],
        "maxSteps": MAX_STEPS,
        "rulesets": {ruleset.key: {str(seed): line(ruleset, seed) for seed in SEEDS} for ruleset in ALL_RULESETS},
    }


def render(table: dict[str, Any]) -> str:
    """JSON with one line per seed, so a change reads as a small diff."""
    out = ["{"]
    out.append(f'  "format": {json.dumps(table["format"])},')
    out.append(f'  "seeds": {json.dumps(table["seeds"])},')
    out.append(f'  "maxSteps": {json.dumps(table["maxSteps"])},')
    out.append('  "rulesets": {')
    keys = list(table["rulesets"])
    for i, key in enumerate(keys):
        out.append(f"    {json.dumps(key)}: {{")
        seeds = table["rulesets"][key]
        for j, seed in enumerate(seeds):
            comma = "," if j < len(seeds) - 1 else ""
            out.append(f"      {json.dumps(seed)}: {json.dumps(seeds[seed], separators=(', ', ': '))}{comma}")
        out.append("    }" + ("," if i < len(keys) - 1 else ""))
    out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true", help=f"rewrite {GOLDEN.name} instead of comparing")
    args = parser.parse_args(argv)
    text = render(compute())
    if args.write:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
        print(f"wrote {GOLDEN}")
        return 0
    if GOLDEN.exists() and GOLDEN.read_text(encoding="utf-8") == text:
        print(f"{GOLDEN} is up to date")
        return 0
    print(f"{GOLDEN} differs from the engine: rerun with --write if the change is intended", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
