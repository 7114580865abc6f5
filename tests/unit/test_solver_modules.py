"""The solver package's modules import one another without a cycle and share only public names."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "domain" / "solver"


def _imports() -> dict[str, list[tuple[str, list[str]]]]:
    """module -> [(a sibling module it imports from, the names it takes)], from relative imports."""
    found: dict[str, list[tuple[str, list[str]]]] = {}
    for path in sorted(PACKAGE.glob("*.py")):
        edges: list[tuple[str, list[str]]] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names = [alias.name for alias in node.names]
                if node.module is None:
                    edges.extend((name, []) for name in names)  # from . import module
                else:
                    edges.append((node.module, names))
        found[path.stem] = edges
    return found


def test_the_solver_modules_import_one_another_without_a_cycle() -> None:
    graph = {module: {target for target, _ in edges} for module, edges in _imports().items()}
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, " -> ".join((*path, module))
        if module in done:
            return
        for target in graph.get(module, ()):
            visit(target, (*path, module))
        done.add(module)

    for module in graph:
        visit(module, ())


def test_no_private_name_is_imported_from_another_solver_module() -> None:
    private = [
        f"{module} imports {name} from {target}"
        for module, edges in _imports().items()
        for target, names in edges
        for name in names
        if name.startswith("_")
    ]
    assert not private
