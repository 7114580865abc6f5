"""A scenario's results: its report printed, and the results with the report's lines written as JSON."""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from .env import PROJECT_ROOT


def write_results(results: dict[str, Any], text: str, results_file: Path) -> None:
    """Print ``text``, keep its lines as ``results["table"]`` and write ``results`` to ``results_file``."""
    print(text)
    results["table"] = text.splitlines()
    results_file.parent.mkdir(parents=True, exist_ok=True)
    results_file.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(f"(written to {results_file.relative_to(PROJECT_ROOT)})")


def run_and_report(
    run: Callable[[float, Path], Coroutine[Any, Any, dict[str, Any]]], seconds: float, prefix: str,
    describe: Callable[[dict[str, Any]], str], results_file: Path,
) -> dict[str, Any]:
    """``run`` in a temp dir of its own (removed after), its report printed and its results written."""
    work_dir = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        results = asyncio.run(run(seconds, work_dir))
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    write_results(results, describe(results), results_file)
    return results
