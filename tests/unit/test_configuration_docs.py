"""docs/configuration.md's table of environment settings and the code agree: every variable
`Settings.from_env` reads has a row, every row names a variable the code reads, and each row's default
is the code's, in the variable's unit (milliseconds for ``..._MS``, ``on``/``off`` for a switch, ``1``/``0``
for a flag; ``unset`` for none). The variables read outside `Settings.from_env` are found, with their
defaults, in the source of the module that reads them."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path
from typing import Any

import pytest

from service.settings import ENV_VARS, PROJECT_ROOT, EnvVar, Settings, env_default

ROOT = Path(__file__).resolve().parents[2]
CONFIGURATION_MD = ROOT / "docs" / "configuration.md"
SECTION = "## Environment settings"
# Variables of the table read at import time by another module (before any Settings exists).
READ_ELSEWHERE = {
    "LOG_FORMAT": ROOT / "service" / "http" / "asgi.py",
    "REQUEST_TIMEOUT_SECONDS": ROOT / "service" / "http" / "server.py",
}


class RecordingEnviron(dict[str, str]):
    """An empty environment that notes every name looked up in it."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        self.names.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> str:
        self.names.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.names.add(key)
        return super().__contains__(key)


def table_rows(text: str) -> dict[str, str | None]:
    """Each variable of the section's table with the default its row shows (None: ``unset ...``).
    A row may name several variables with as many defaults: `` `HOST`, `PORT` | `127.0.0.1`, `8000` ``."""
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str | None] = {}
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [cell.strip() for cell in line.split("|")]
        names = re.findall(r"`([^`]+)`", cells[1])
        shown = cells[2]
        defaults: list[str | None] = (
            [None] * len(names) if shown.startswith("unset") else re.findall(r"`([^`]*)`", shown)
        )
        assert len(defaults) == len(names), f"the row of {', '.join(names)} shows defaults {shown!r}"
        for name, default in zip(names, defaults, strict=True):
            assert name not in rows, f"{name} has two rows"
            rows[name] = default
    return rows


def written(variable: EnvVar, value: Any) -> str | None:
    """A default as one would set it in the variable."""
    if value is None:
        return None
    if variable.kind == "switch":
        return "on" if value else "off"
    if variable.kind == "flag":
        return "1" if value else "0"
    if variable.kind == "list":
        return ",".join(value)
    if variable.kind == "path":
        return str(Path(value).relative_to(PROJECT_ROOT))
    return str(value)


def same(shown: str | None, code: str | None) -> bool:
    if shown is None or code is None:
        return shown is code
    try:
        return float(shown) == float(code)
    except ValueError:
        return shown == code


def default_in_source(path: Path, name: str) -> str | None:
    """The default of ``os.environ.get(name, default)`` or ``os.environ.get(name) or default`` in
    the module at ``path``, as text; None when the module reads ``name`` neither way."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and _reads(node.values[0], name):
            fallback = node.values[1]
        elif isinstance(node, ast.Call) and _reads(node, name) and len(node.args) == 2:
            fallback = node.args[1]
        else:
            continue
        assert isinstance(fallback, ast.Constant), f"{path.name} reads {name} with a default that is not a literal"
        return str(fallback.value)
    return None


def _reads(node: ast.expr, name: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and ast.unparse(node.func) == "os.environ.get"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value == name
    )


@pytest.fixture
def read_names(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Every variable `Settings.from_env` looks up, when none is set."""
    environ = RecordingEnviron()
    monkeypatch.setattr(os, "environ", environ)
    assert Settings.from_env() == Settings(), "with nothing set, from_env gives the defaults"
    return environ.names


def test_the_table_names_every_variable_from_env_reads_and_no_other(read_names: set[str]) -> None:
    documented = set(table_rows(CONFIGURATION_MD.read_text(encoding="utf-8")))
    assert read_names == {variable.name for variable in ENV_VARS}, "from_env reads only through ENV_VARS"
    missing = sorted(read_names - documented)
    unknown = sorted(documented - read_names - set(READ_ELSEWHERE))
    assert (missing, unknown) == ([], []), (
        f"read by Settings.from_env, missing from configuration.md: {missing}; "
        f"in configuration.md, read by nothing: {unknown}"
    )


def test_the_table_shows_the_code_s_defaults() -> None:
    rows = table_rows(CONFIGURATION_MD.read_text(encoding="utf-8"))
    wrong = [
        f"{variable.name}: configuration.md shows {rows[variable.name]!r}, the code's default is {code!r}"
        for variable in ENV_VARS
        if variable.name in rows
        and not same(rows[variable.name], code := written(variable, env_default(variable)))
    ]
    for name, path in READ_ELSEWHERE.items():
        code = default_in_source(path, name)
        assert code is not None, f"{path.name} no longer reads {name} with a default"
        if name in rows and not same(rows[name], code):
            wrong.append(f"{name}: configuration.md shows {rows[name]!r}, {path.name}'s default is {code!r}")
    assert wrong == [], "\n".join(wrong)


def test_a_row_with_a_wrong_default_or_an_unknown_name_is_found() -> None:
    """The checks above can fail: a row changed the way a stale table would be is caught."""
    text = CONFIGURATION_MD.read_text(encoding="utf-8")
    stale = text.replace("| `WORKERS` | `1` |", "| `WORKERS` | `4` |").replace(
        "| `HOST`, `PORT` | `127.0.0.1`, `8000` |", "| `HOST`, `PORTS` | `127.0.0.1`, `8000` |"
    )
    assert stale != text
    rows = table_rows(stale)
    workers = next(variable for variable in ENV_VARS if variable.name == "WORKERS")
    assert not same(rows["WORKERS"], written(workers, env_default(workers)))
    assert "PORT" not in rows
    assert "PORTS" in rows
    with pytest.raises(AssertionError, match="shows defaults"):
        table_rows(text.replace("| `HOST`, `PORT` | `127.0.0.1`, `8000` |", "| `HOST`, `PORT` | `127.0.0.1` |"))


def test_ms_variables_are_read_in_milliseconds(monkeypatch: pytest.MonkeyPatch) -> None:
    (variable,) = (variable for variable in ENV_VARS if variable.name == "SOLVER_HINT_MS")
    assert env_default(variable) == round(Settings().solver_hint_seconds * 1000)
    monkeypatch.setenv("SOLVER_HINT_MS", "250")
    assert Settings.from_env().solver_hint_seconds == 0.25
