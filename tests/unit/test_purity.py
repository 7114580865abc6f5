"""The rules engine stays pure: standard library and itself only, and strictly typed."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

DOMAIN = Path(__file__).resolve().parents[2] / "domain"
PROJECT = DOMAIN.parent


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every absolute import in a module (line, top-level name); relative imports are skipped."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


def test_domain_imports_only_the_standard_library_and_itself() -> None:
    modules = sorted(DOMAIN.rglob("*.py"))
    assert modules, f"no modules found in {DOMAIN}"
    allowed = set(sys.stdlib_module_names) | {"domain", "__future__"}
    outside = [
        f"{path.relative_to(PROJECT)}:{line} imports {name}"
        for path in modules
        for line, name in imported_modules(path)
        if name not in allowed
    ]
    assert not outside, "domain/ must stay pure:\n" + "\n".join(outside)


def test_the_purity_check_sees_third_party_imports(tmp_path: Path) -> None:
    module = tmp_path / "sample.py"
    module.write_text("import os\nfrom . import cards\nfrom sqlalchemy import select\nimport litestar.app\n")
    names = [name for _, name in imported_modules(module)]
    assert names == ["os", "sqlalchemy", "litestar"]
    assert not set(names[1:]) & set(sys.stdlib_module_names)


def test_domain_passes_mypy_strict() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "domain"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
