"""docs/architecture.md's map of the code names every module of service/ and domain/, so a module
added without a line there fails the build (a map that missed nine modules once misled readers)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAP = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def modules() -> list[Path]:
    found = [*ROOT.joinpath("service").rglob("*.py"), *ROOT.joinpath("domain").rglob("*.py")]
    return sorted(p for p in found if p.name != "__init__.py")


def named(module: Path) -> bool:
    """A module is named by its file name, or (the version changes, listed as a sentence) its stem."""
    return re.search(rf"(?<![\w/]){re.escape(module.name)}\b", MAP) is not None or (
        module.parent.name == "changes" and re.search(rf"\b{re.escape(module.stem)}\b", MAP) is not None
    )


def test_the_map_names_every_module() -> None:
    missing = [str(p.relative_to(ROOT)) for p in modules() if not named(p)]
    assert missing == [], f"docs/architecture.md does not name: {missing}"


def test_a_module_the_map_does_not_name_is_found() -> None:
    assert not named(ROOT / "service" / "games" / "no_such_module_here.py")
    assert named(ROOT / "service" / "games" / "moves.py")
