"""The C extension's stub (``domain/_sound.pyi``) declares exactly what ``domain._sound`` exports."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path
from types import ModuleType

import pytest

from domain.solver import native_available

pytestmark = pytest.mark.skipif(
    not native_available(), reason="domain._sound (the solver's optional C extension) is not built here"
)

STUB = Path(__file__).resolve().parents[2] / "domain" / "_sound.pyi"


def _built() -> ModuleType:
    return importlib.import_module("domain._sound")


def _stub_functions() -> dict[str, list[str]]:
    """The stub's functions, each with its parameter names in order."""
    tree = ast.parse(STUB.read_text())
    functions: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            arguments = node.args
            functions[node.name] = [arg.arg for arg in [*arguments.posonlyargs, *arguments.args]]
    return functions


def _stub_names() -> set[str]:
    """Every public name the stub binds at the top level (functions, classes, variables)."""
    names: set[str] = set()
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
    return {name for name in names if not name.startswith("_")}


def test_the_stub_declares_exactly_the_public_names_of_the_built_module() -> None:
    module = _built()
    exported = {name for name in dir(module) if not name.startswith("_")}
    assert _stub_names() == exported


def test_the_functions_of_the_stub_are_the_callables_of_the_built_module() -> None:
    module = _built()
    callables = {name for name in dir(module) if not name.startswith("_") and callable(getattr(module, name))}
    assert set(_stub_functions()) == callables


def test_the_stub_parameters_are_those_the_built_functions_document() -> None:
    """The C functions take positional arguments only and name them in their docstrings."""
    module = _built()
    for name, parameters in _stub_functions().items():
        documented = re.match(rf"{name}\(([^)]*)\)", getattr(module, name).__doc__ or "")
        assert documented is not None, name
        assert [part.strip() for part in documented.group(1).split(",")] == parameters, name
