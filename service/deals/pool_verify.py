"""`canfield pool verify`, and the pool file every pool command writes and checks.

A pool file is one JSON document: a header (ruleset, solver, budget, the counts over seeds
1..seedsTried and the verdicts listed per seed) and its deals, one per line. ``verify_document``
finds every problem of one: header sums that do not add up, seeds out of order, and each stored
line replayed through the rules engine (``service.deals.deal_pools.verify_deal``). A build and a
recheck run it on the exact text before writing; ``canfield pool verify`` runs it on the pool
files as they are. ``BuildError`` is the one-line failure every ``canfield pool`` command reports.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from itertools import pairwise
from pathlib import Path
from typing import Any

from domain.errors import DomainError
from domain.rulesets import ALL_RULESETS, Ruleset, get_ruleset
from service.deals.deal_pools import (
    DEAL_POOL_DIR,
    DealPool,
    PoolDeal,
    Verdicts,
    deal_pool_path,
    parse_pool,
    verify_deal,
)


class BuildError(Exception):
    """A failure to report in one line (bad arguments, an unreadable file...)."""


def pool_ruleset(ruleset_id: str) -> Ruleset:
    try:
        return get_ruleset(ruleset_id)
    except DomainError as exc:
        raise BuildError(exc.reason) from None


def _empty_pool(ruleset: Ruleset) -> DealPool:
    return DealPool(ruleset, 0.0, 0, 0, 0, 0, ())


def check_line(ruleset: Ruleset, seed: int, length: int, line: str) -> str | None:
    """None when the encoded line replays to a win from the seed's deal, else why not."""
    return verify_deal(_empty_pool(ruleset), PoolDeal(0, seed, length, line))


def line_problem(ruleset: Ruleset, record: dict[str, Any]) -> str | None:
    """None when a won record's line replays to a win from its seed's deal, else why not."""
    return check_line(ruleset, int(record["seed"]), int(record["length"]), record["line"])


def loud(message: str) -> None:
    print(f"\ncanfield pool build: VERIFICATION FAILED: {message}", file=sys.stderr, flush=True)


def pool_json(document: dict[str, Any]) -> str:
    """Pretty but compact: one header key per line, one deal per line (small diffs), final newline."""
    header = [f"  {json.dumps(key)}: {_compact(value)}" for key, value in document.items() if key != "deals"]
    deals = [f"    {json.dumps(deal, ensure_ascii=False)}" for deal in document["deals"]]
    body = ",\n".join(header)
    if deals:
        return "{\n" + body + ',\n  "deals": [\n' + ",\n".join(deals) + "\n  ]\n}\n"
    return "{\n" + body + ',\n  "deals": []\n}\n'


def _compact(value: Any) -> str:
    """A header value; the verdict lists one entry kind per line."""
    if not isinstance(value, dict):
        return json.dumps(value)
    items = [f"    {json.dumps(key)}: {json.dumps(item, ensure_ascii=False)}" for key, item in value.items()]
    return "{\n" + ",\n".join(items) + "\n  }"


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False, suffix=".tmp") as tmp:
        tmp.write(text)
        tmp.flush()
        os.fsync(tmp.fileno())
    os.chmod(tmp.name, 0o644)
    os.replace(tmp.name, path)


DealCheck = Callable[[DealPool, Iterable[PoolDeal]], Iterable[str | None]]


def verify_document(document: dict[str, Any], deal_check: DealCheck | None = None) -> list[str]:
    """Every problem of a pool document: header sums, seed order, and each line replayed to a win."""
    try:
        pool = parse_pool(document)
    except Exception as error:  # a missing key, a bad type, an unknown ruleset...
        return [f"unreadable pool: {type(error).__name__}: {error}"]
    problems: list[str] = []
    if pool.won + pool.lost + pool.undecided != pool.seeds_tried:
        problems.append(
            f"won {pool.won} + lost {pool.lost} + undecided {pool.undecided} != seedsTried {pool.seeds_tried}"
        )
    outside = pool.verdicts.won_outside_pool if pool.verdicts else ()
    if pool.size + len(outside) != pool.won:
        problems.append(f"{pool.size} deals and {len(outside)} won outside the pool but won {pool.won}")
    if pool.verdicts is not None:
        problems.extend(_verdict_problems(pool, pool.verdicts))
    seeds = [item.seed for item in pool.deals]
    if any(a >= b for a, b in pairwise(seeds)) or (seeds and seeds[0] < 1):
        problems.append("the deal seeds are not strictly increasing from 1")
    if seeds and seeds[-1] != pool.seeds_tried:
        problems.append(f"the last deal's seed {seeds[-1]} is not seedsTried {pool.seeds_tried}")
    lines = pool.deals + outside
    if deal_check is None:
        errors: Iterable[str | None] = (verify_deal(pool, item) for item in lines)
    else:
        errors = deal_check(pool, lines)
    problems.extend(error for error in errors if error is not None)
    return problems


def _verdict_problems(pool: DealPool, verdicts: Verdicts) -> list[str]:
    """The listed verdicts cover seeds 1..seedsTried once each and agree with the counts."""
    problems = []
    if len(verdicts.lost) != pool.lost:
        problems.append(f"lost {pool.lost} but {len(verdicts.lost)} lost seeds listed")
    if len(verdicts.undecided) != pool.undecided:
        problems.append(f"undecided {pool.undecided} but {len(verdicts.undecided)} undecided seeds listed")
    listed = [item.seed for item in pool.deals + verdicts.won_outside_pool] + [*verdicts.lost, *verdicts.undecided]
    if sorted(listed) != list(range(1, pool.seeds_tried + 1)):
        problems.append(f"the deals and listed verdicts do not name each of seeds 1..{pool.seeds_tried} once")
    return problems


# --- verify -----------------------------------------------------------------------------


def pool_files(
    ruleset_id: str | None, file: Path | None = None, directory: Path = DEAL_POOL_DIR
) -> list[tuple[str, Path]]:
    """(label, path) of the pools to verify."""
    if file is not None:
        return [(str(file), file)]
    if ruleset_id is not None:
        ruleset = pool_ruleset(ruleset_id)
        return [(ruleset.id, deal_pool_path(ruleset.id, directory))]
    ids = sorted({ruleset.id for ruleset in ALL_RULESETS})
    return [(rid, deal_pool_path(rid, directory)) for rid in ids if deal_pool_path(rid, directory).exists()]


def verify(ruleset_id: str | None = None, file: Path | None = None) -> int:
    """Replay every stored line; 0 when all pools check out, 1 on any failure."""
    targets = pool_files(ruleset_id, file)
    if not targets:
        print(f"canfield pool verify: no pool files in {DEAL_POOL_DIR}", file=sys.stderr)
        return 0
    failed = False
    for label, path in targets:
        if not path.exists():
            print(f"{label}: FAILED: no pool file {path}")
            failed = True
            continue
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            print(f"{label}: FAILED: cannot read {path}: {error}")
            failed = True
            continue
        problems = verify_document(document)
        if ruleset_id is not None and file is None and document.get("ruleset") != ruleset_id:
            problems.insert(0, f"the file is for ruleset {document.get('ruleset')!r}")
        if problems:
            failed = True
            for problem in problems:
                print(f"{label}: FAILED: {problem}")
        else:
            print(f"{label}: ok: {len(document['deals'])} deals")
    return 1 if failed else 0
