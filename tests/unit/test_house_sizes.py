"""The house's sizes (docs/architecture.md): no module of domain/ or service/ over 600 lines, no
function over 60 lines, none taking more than 6 parameters (``self`` and ``cls`` not counted; pass
an object instead). An HTTP handler's parameters are the operation's own (its path, query and
header parameters, one each, as Litestar reads and documents them), so a route handler's list is
as long as its operation's: the rule is for the functions the service calls itself."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MOST_LINES, MOST_FUNCTION_LINES, MOST_PARAMETERS = 600, 60, 6


def _modules() -> Iterator[Path]:
    for package in ("domain", "service"):
        yield from sorted((ROOT / package).rglob("*.py"))


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    arguments = function.args
    named = [a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]
    starred = [f"{stars}{a.arg}" for stars, a in (("*", arguments.vararg), ("**", arguments.kwarg)) if a is not None]
    return [name for name in named if name not in ("self", "cls")] + starred


ROUTE_DECORATORS = frozenset({"get", "post", "put", "patch", "delete"})


def _route_handler(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id in ROUTE_DECORATORS
               for d in function.decorator_list)


def test_no_module_is_over_600_lines() -> None:
    long = [f"{path.relative_to(ROOT)}: {count}" for path in _modules()
            if (count := len(path.read_text().splitlines())) > MOST_LINES]
    assert long == []


def test_no_function_is_over_60_lines_or_takes_over_6_parameters() -> None:
    found = []
    for path in _modules():
        for function in _functions(ast.parse(path.read_text())):
            where = f"{path.relative_to(ROOT)}:{function.lineno} {function.name}"
            lines = (function.end_lineno or function.lineno) - function.lineno + 1
            if lines > MOST_FUNCTION_LINES:
                found.append(f"{where}: {lines} lines")
            if len(parameters := _parameters(function)) > MOST_PARAMETERS and not _route_handler(function):
                found.append(f"{where}: {len(parameters)} parameters ({', '.join(parameters)})")
    assert found == []


def test_the_counter_sees_what_it_counts() -> None:
    source = "class A:\n    def f(self, a, b, *c, d, **e):\n        pass\n"
    (function,) = _functions(ast.parse(source))
    assert _parameters(function) == ["a", "b", "d", "*c", "**e"]
