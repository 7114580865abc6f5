"""The house rules on the code's shape, read from the source with `ast` (no import, no I/O beyond
reading the files):

* no function or method in domain/, service/ or bench/ is longer than 60 lines (from its `def`
  line to its last line; decorators are not counted);
* no import cycle among the modules of domain/ and service/: the graph has an edge for every
  import of one of those modules, relative ones resolved, imports inside functions included,
  those under `if TYPE_CHECKING:` left out (they never run). `import a.b` and `from a import b`
  point at the module they name (`a.b`), not at the packages above it. A second check counts
  the `TYPE_CHECKING` imports too: two modules that need each other's types are one concept
  split in two, even when the cycle never runs;
* the domain stays pure. tests/unit/test_purity.py checks its imports (the standard library and
  itself) and its types; here: no clock and no randomness that is not seeded.

Every failure names each offender: file:line and name with its length, or the modules of a cycle
with the imports that close it.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_FUNCTION_LINES = 60
ACYCLIC_PACKAGES = ("domain", "service")


@functools.cache
def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _modules(root: Path, packages: tuple[str, ...]) -> list[Path]:
    return sorted(path for package in packages for path in (root / package).rglob("*.py"))


def _shown(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


# --- function length ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LongFunction:
    where: str  # file:line of the `def`
    name: str  # Class.method, outer.inner
    length: int

    def __str__(self) -> str:
        return f"{self.where} {self.name} is {self.length} lines"


def long_functions(path: Path, limit: int, root: Path = ROOT) -> list[LongFunction]:
    """Every function or method in `path` longer than `limit` lines, nested ones included."""
    found: list[LongFunction] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (child.end_lineno or child.lineno) - child.lineno + 1  # lineno is the `def`
                if length > limit:
                    found.append(LongFunction(f"{_shown(path, root)}:{child.lineno}", prefix + child.name, length))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(_parse(path), "")
    return found


@pytest.mark.parametrize("package", ["domain", "service", "bench"])
def test_no_function_is_longer_than_60_lines(package: str) -> None:
    paths = _modules(ROOT, (package,))
    assert paths, f"no modules found in {ROOT / package}"
    offenders = [str(long) for path in paths for long in long_functions(path, MAX_FUNCTION_LINES)]
    assert not offenders, (
        f"{len(offenders)} function(s) in {package}/ longer than {MAX_FUNCTION_LINES} lines:\n" + "\n".join(offenders)
    )


def test_the_length_check_counts_from_the_def_to_the_last_line(tmp_path: Path) -> None:
    lines = ["import functools", "@functools.cache", "@functools.wraps(print)", "def fits():"]  # def at 4
    lines += ["    x = 1"] * 58 + ["    return x"]  # 4..63: 60 lines
    lines += ["class Table:", "    async def spills(self):"]  # def at 65
    lines += ["        y = 1"] * 59 + ["        return y"]  # 65..125: 61 lines
    lines += ["def outer():", "    def inner():", "        return 1"]  # def at 126
    lines += ["    z = 2"] * 58 + ["    return inner"]  # 126..187: 62 lines
    (tmp_path / "sample.py").write_text("\n".join(lines) + "\n")
    found = long_functions(tmp_path / "sample.py", 60, root=tmp_path)
    assert [str(long) for long in found] == ["sample.py:65 Table.spills is 61 lines", "sample.py:126 outer is 62 lines"]


# --- import cycles --------------------------------------------------------------------------------


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _nodes(tree: ast.AST, type_checking: bool) -> Iterator[ast.AST]:
    """Every node of `tree`; without `type_checking`, not the bodies of `if TYPE_CHECKING:` (their
    `else:` runs)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not type_checking and isinstance(child, ast.If) and _is_type_checking(child.test):
                stack.extend(child.orelse)
            else:
                stack.append(child)


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    where: str  # file:line of the import statement


def _imported(node: ast.Import | ast.ImportFrom, package: str, known: set[str]) -> list[str]:
    """The modules of `known` that one import statement loads, in a module of `package`."""
    if isinstance(node, ast.Import):
        named = [alias.name for alias in node.names]
        return [name for name in named if name in known]
    if node.level:
        base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
        module = ".".join([*base, node.module] if node.module else base)
    else:
        module = node.module or ""
    targets = []
    for alias in node.names:
        if f"{module}.{alias.name}" in known:
            targets.append(f"{module}.{alias.name}")  # a submodule
        elif module in known:
            targets.append(module)  # a name from the module (or from the package's __init__)
    return targets


def import_graph(root: Path, packages: tuple[str, ...], type_checking: bool = False) -> dict[str, list[Import]]:
    """Each module of `packages` under `root`: its imports of other such modules (with
    `type_checking`, those under `if TYPE_CHECKING:` too)."""
    paths = {module_name(path, root): path for path in _modules(root, packages)}
    known = set(paths)
    graph: dict[str, list[Import]] = {}
    for name, path in sorted(paths.items()):
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = {
            (target, node.lineno)
            for node in _nodes(_parse(path), type_checking)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for target in _imported(node, package, known)
            if target != name
        }
        graph[name] = [Import(name, target, f"{_shown(path, root)}:{line}") for target, line in sorted(edges)]
    return graph


def strongly_connected(graph: dict[str, list[Import]]) -> list[list[str]]:
    """Tarjan's algorithm: the components of more than one module, each sorted, in sorted order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for edge in graph.get(module, []):
            if edge.target not in index:
                connect(edge.target)
                low[module] = min(low[module], low[edge.target])
            elif edge.target in on_stack:
                low[module] = min(low[module], index[edge.target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            connect(module)
    return sorted(components)


def import_cycles(root: Path, packages: tuple[str, ...], type_checking: bool = False) -> list[str]:
    """One line per cycle (strongly connected component): its modules, then the imports inside it."""
    graph = import_graph(root, packages, type_checking)
    reports = []
    for component in strongly_connected(graph):
        members = set(component)
        inside = [edge for module in component for edge in graph[module] if edge.target in members]
        reports.append(
            f"cycle among {', '.join(component)}: "
            + "; ".join(f"{edge.source} -> {edge.target} ({edge.where})" for edge in inside)
        )
    return reports


def test_no_import_cycle_among_the_modules_of_domain_and_service() -> None:
    cycles = import_cycles(ROOT, ACYCLIC_PACKAGES)
    assert not cycles, f"{len(cycles)} import cycle(s):\n" + "\n".join(cycles)


def test_no_import_cycle_even_through_imports_for_type_checking() -> None:
    cycles = import_cycles(ROOT, ACYCLIC_PACKAGES, type_checking=True)
    assert not cycles, f"{len(cycles)} import cycle(s), counting `if TYPE_CHECKING:` imports:\n" + "\n".join(cycles)


def test_the_cycle_check_resolves_relative_and_lazy_imports_and_skips_type_checking(tmp_path: Path) -> None:
    files = {
        "app/__init__.py": "from .a import A\n",
        "app/a.py": "from . import b\nA = 1\n",
        "app/b.py": "def later():\n    from app.sub import c\n    return c\n",
        "app/sub/__init__.py": "",
        "app/sub/c.py": "from ..a import A\nimport app.d\n",
        "app/d.py": "import typing\nif typing.TYPE_CHECKING:\n    from app import e\nelse:\n    import os\n",
        "app/e.py": "import app.d\nimport os.path\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    running = (
        "cycle among app.a, app.b, app.sub.c: app.a -> app.b (app/a.py:1); app.b -> app.sub.c (app/b.py:2); "
        "app.sub.c -> app.a (app/sub/c.py:1)"
    )
    assert import_cycles(tmp_path, ("app",)) == [running]  # app -> app.a closes no cycle
    typed = "cycle among app.d, app.e: app.d -> app.e (app/d.py:3); app.e -> app.d (app/e.py:1)"
    assert import_cycles(tmp_path, ("app",), type_checking=True) == [running, typed]


# --- a pure domain: no clock, no unseeded randomness ---------------------------------------------

CLOCK_OR_CHANCE_MODULES = {"time", "secrets", "uuid"}
CLOCK_OR_CHANCE_CALLS = {"now", "utcnow", "today", "urandom", "getrandom"}  # datetime's clock, os's entropy


def clock_or_chance(path: Path, root: Path = ROOT) -> list[str]:
    """What in `path` reads a clock or draws randomness that no seed fixes. `random.Random(seed)`
    is allowed; the module's shared generator (`random.shuffle`, ...) and `Random()` are not."""
    found = []
    where = _shown(path, root)
    random_names = {"random"}
    for node in ast.walk(_parse(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top in CLOCK_OR_CHANCE_MODULES:
                    found.append(f"{where}:{node.lineno} imports {alias.name}")
                if top == "random":
                    random_names.add(alias.asname or "random")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            top = node.module.split(".")[0]
            if top in CLOCK_OR_CHANCE_MODULES:
                found.append(f"{where}:{node.lineno} imports from {node.module}")
            if top == "random":
                drawn = [alias.name for alias in node.names if alias.name != "Random"]
                found += [f"{where}:{node.lineno} imports random.{name}" for name in drawn]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name):
            function = node.func
            name = function.attr if isinstance(function, ast.Attribute) else function.id
            if isinstance(function, ast.Attribute) and name in CLOCK_OR_CHANCE_CALLS:
                found.append(f"{where}:{node.lineno} calls .{name}()")
            elif name == "Random" and not node.args and not node.keywords:
                found.append(f"{where}:{node.lineno} calls Random() without a seed")
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in random_names
            and node.attr != "Random"
        ):
            found.append(f"{where}:{node.lineno} uses random.{node.attr} (the unseeded shared generator)")
    return sorted(found)


def test_the_domain_reads_no_clock_and_draws_no_unseeded_randomness() -> None:
    paths = _modules(ROOT, ("domain",))
    assert paths, f"no modules found in {ROOT / 'domain'}"
    offenders = [found for path in paths for found in clock_or_chance(path)]
    assert not offenders, "domain/ must stay pure (no clock, no unseeded randomness):\n" + "\n".join(offenders)


def test_the_clock_check_sees_clocks_and_unseeded_draws(tmp_path: Path) -> None:
    (tmp_path / "sample.py").write_text(
        "import random\nimport time\nfrom datetime import datetime\n"
        "rng = random.Random(7)\nrng.shuffle([1, 2])\n"
        "random.shuffle([1, 2])\nrandom.Random()\ndatetime.now()\ntime.monotonic()\n"
    )
    assert clock_or_chance(tmp_path / "sample.py", root=tmp_path) == [
        "sample.py:2 imports time",
        "sample.py:6 uses random.shuffle (the unseeded shared generator)",
        "sample.py:7 calls Random() without a seed",
        "sample.py:8 calls .now()",
    ]
