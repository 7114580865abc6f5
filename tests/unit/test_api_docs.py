"""docs/api.md and the OpenAPI documents agree on what there is, and the documents speak for
themselves: every operation is in api.md, api.md names no operation the service does not have, and
no description or summary points into this repository (a generated client turns them into its
docstrings, where a file name means nothing)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
API_MD = ROOT / "docs" / "api.md"
DOCUMENTS = sorted((ROOT / "openapi").glob("*.json"))
METHODS = ("get", "post", "put", "patch", "delete")
# A path parameter as api.md writes it: `{id}`, `$GAME` (in curl lines) or `<id>`.
PARAMETER = r"(?:\{[^}/\s]*\}|\$\w+|<[^>/\s]*>)"
MENTION = re.compile(r"\b(GET|POST|PUT|PATCH|DELETE) (/[^\s`?,;)]*)")
# Paths api.md writes on purpose as examples of what is not an operation (they are 404s).
NOT_OPERATIONS = {("GET", "/games/1234"), ("POST", "/games/{id}/moves/")}
INTERNAL = re.compile(r"\.md\b|\.py\b|service/|docs/|API\.md", re.IGNORECASE)


def operations(document: dict) -> Iterator[tuple[str, str]]:
    for path, item in document["paths"].items():
        for method in METHODS:
            if method in item:
                yield method.upper(), path


def path_pattern(path: str) -> str:
    """An OpenAPI path as a regex: each ``{name}`` matches any way api.md writes a parameter."""
    return PARAMETER.join(re.escape(part) for part in re.split(r"\{[^}]*\}", path))


def mentions(text: str, method: str, path: str) -> bool:
    return re.search(rf"\b{method} {path_pattern(path)}(?![\w/.-])", text) is not None


def texts(node: object, where: str = "#") -> Iterator[tuple[str, str]]:
    """Every description and summary of a document, with where it is."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("description", "summary") and isinstance(value, str):
                yield f"{where}/{key}", value
            yield from texts(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from texts(value, f"{where}[{index}]")


def test_there_is_a_document() -> None:
    assert ROOT / "openapi" / "openapi.json" in DOCUMENTS


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_api_md_documents_every_operation(document: Path) -> None:
    text = API_MD.read_text()
    missing = [f"{method} {path}" for method, path in operations(json.loads(document.read_text()))
               if not mentions(text, method, path)]  # fmt: skip
    assert not missing, f"docs/api.md does not mention (as `METHOD /path`): {missing}"


def test_api_md_names_no_operation_the_service_lacks() -> None:
    document = json.loads((ROOT / "openapi" / "openapi.json").read_text())
    known = [(method, re.compile(path_pattern(path) + "$")) for method, path in operations(document)]
    unknown = []
    for found in MENTION.finditer(API_MD.read_text()):
        method, path = found.group(1), found.group(2).rstrip(".:")
        if (method, path) not in NOT_OPERATIONS and not any(m == method and p.match(path) for m, p in known):
            unknown.append(f"{method} {path}")
    assert not unknown, f"docs/api.md names operations the OpenAPI document does not have: {unknown}"


def test_the_mention_check_can_fail() -> None:
    assert mentions("`GET /games/{id}/states/{n}`", "GET", "/games/{game_id}/states/{version}")
    assert mentions("curl -X DELETE /players/me", "DELETE", "/players/me")
    assert not mentions("`GET /players/me`", "GET", "/players/{player_id}")  # `me` is no parameter
    assert not mentions("`GET /players/me/export`", "GET", "/players/me")
    assert not mentions("`POST /games`", "GET", "/games")


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_no_description_names_a_file_of_this_repository(document: Path) -> None:
    found = [(where, text) for where, text in texts(json.loads(document.read_text())) if INTERNAL.search(text)]
    assert not found, found


def test_the_file_name_check_can_fail() -> None:
    said = dict(texts({"a": {"description": "see docs/deals.md"}, "b": [{"summary": "(API.md: Races)"}]}))
    assert said == {"#/a/description": "see docs/deals.md", "#/b[0]/summary": "(API.md: Races)"}
    assert all(INTERNAL.search(text) for text in said.values())
    assert not INTERNAL.search("GET /deals/pool lists the pools; a move is {'type': 'draw'}")
