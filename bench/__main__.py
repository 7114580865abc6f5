"""Run every benchmark: ``python -m bench [name ...]``."""

from __future__ import annotations

import sys

from . import api_bench, domain_bench, soak_bench, solver_bench

BENCHES = {"domain": domain_bench.main, "api": api_bench.main, "soak": soak_bench.main, "solver": solver_bench.main}


def main(argv: list[str]) -> None:
    names = argv or list(BENCHES)
    for name in names:
        print(f"== {name}")
        BENCHES[name]()


if __name__ == "__main__":
    main(sys.argv[1:])
