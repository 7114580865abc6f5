import json
from pathlib import Path

import httpx
import pytest

from service.http.app import create_app
from service.http.openapi.versions import document_of
from service.http.versions import SERVED, Version
from service.settings import Settings

from .test_golden_replies import differences

OPENAPI = Path(__file__).resolve().parents[2] / "openapi"
COMMITTED = OPENAPI / "openapi.json"
FIRST_RECORDED = Path(__file__).resolve().parent / "golden" / "openapi-2026-12-04.json"
"""The document of the first version as it was when versions began (the golden replies' document)."""


def live_schema() -> dict:
    return create_app(Settings(database_url="postgresql://unused/none")).openapi_schema.to_schema()


def test_every_operation_has_an_id_a_summary_and_its_problems() -> None:
    schema = live_schema()
    seen = set()
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            assert operation.get("operationId"), (method, path)
            assert operation["operationId"] not in seen
            seen.add(operation["operationId"])
            assert operation.get("summary"), (method, path)
            statuses = {int(s) for s in operation["responses"] if s.isdigit()}
            if "{" in path or method == "post":
                assert any(400 <= s < 500 for s in statuses), (method, path, statuses)
            for status in statuses:
                if status >= 400:
                    content = operation["responses"][str(status)]["content"]
                    assert "application/problem+json" in content, (method, path, status)


def versioned(version: Version) -> dict:
    return json.loads(json.dumps(document_of(live_schema(), version)))


def test_the_committed_openapi_documents_are_the_live_ones() -> None:
    for version in SERVED.all:
        committed = json.loads((OPENAPI / f"{version.name}.json").read_text())
        assert committed == versioned(version), f"run `make openapi` and commit openapi/{version.name}.json"
    assert json.loads(COMMITTED.read_text()) == versioned(SERVED.oldest), "openapi.json is the oldest version's"


def test_the_first_versions_document_is_still_the_one_it_was() -> None:
    """Made from the newest by the version changes since, the first version's document still has
    every shape it had when it was recorded: a member may be added (an additive change), none changed."""
    changed = differences(shapes(json.loads(FIRST_RECORDED.read_text())), shapes(versioned(SERVED.oldest)))
    assert changed == ["$.info.version: '1.0.0' became '2026-12-04'"]  # each document names its version


def shapes(document: object) -> object:
    """A document without its prose (descriptions and summaries may be reworded or say more), its
    ``required`` lists as sets (a reply may gain a member it always has)."""
    if isinstance(document, dict):
        return {key: dict.fromkeys(value, True) if key == "required" and isinstance(value, list) else shapes(value)
                for key, value in document.items() if key not in ("description", "summary")}
    if isinstance(document, list):
        return [shapes(value) for value in document]
    return document


def test_each_document_sets_its_own_version() -> None:
    for version in SERVED.all:
        document = versioned(version)
        assert document["info"]["version"] == version.name
        assert document["components"]["parameters"]["Api-Version"]["schema"]["enum"] == [version.name]


def test_the_server_serves_each_versions_openapi_document(client: httpx.Client) -> None:
    response = client.get("/schema/openapi.json")
    assert response.status_code == 200
    assert response.json()["info"]["title"] == "Canfield Solitaire API"
    assert response.json()["info"]["version"] == SERVED.oldest.name  # as any request without a version
    for version in SERVED.all:
        by_query = client.get("/schema/openapi.json", params={"version": version.name})
        by_header = client.get("/schema/openapi.json", headers={"Api-Version": version.name})
        assert by_query.json() == by_header.json() == versioned(version)
    newest = client.get("/schema/openapi.json", params={"version": SERVED.newest.name}).json()
    assert "items" in newest["components"]["schemas"]["GameList"]["properties"]
    refused = client.get("/schema/openapi.json", params={"version": "2001-01-01"})
    assert refused.status_code == 400
    assert refused.json()["code"] == "unsupported_version"


# ---------------------------------------------------------------- oneOf: branches that cannot overlap
#
# A oneOf whose branches overlap is ambiguous to validators (a value matching two branches is
# invalid) and to generators (which class to build). Redocly's built-in rules do not prove this,
# so this does: every pair of branches must be told apart by JSON type, by a property both
# require with different constants (a discriminator), or by a property one requires and the
# other, closed to unknown properties, cannot have. And every discriminator's mapping must name
# exactly its branches, each of which requires the property with that constant.

TYPES = {"null", "boolean", "object", "array", "number", "integer", "string"}


def resolve(document: dict, schema: dict) -> dict:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def json_types(document: dict, schema: dict) -> set[str]:
    """The JSON types a schema's values can have (every type when it does not say)."""
    schema = resolve(document, schema)
    if "type" in schema:
        found = {schema["type"]} if isinstance(schema["type"], str) else set(schema["type"])
        return found | ({"integer"} if "number" in found else set())
    for union in ("oneOf", "anyOf"):
        if union in schema:
            return set().union(*(json_types(document, branch) for branch in schema[union]))
    if "const" in schema:
        return {"null" if schema["const"] is None else "string" if isinstance(schema["const"], str) else "number"}
    return set(TYPES)


def constants(document: dict, schema: dict) -> set | None:
    schema = resolve(document, schema)
    if "const" in schema:
        return {schema["const"]}
    return set(schema["enum"]) if "enum" in schema else None


def told_apart(document: dict, first: dict, second: dict) -> str | None:
    """How two branches are proven disjoint, or None."""
    left, right = json_types(document, first), json_types(document, second)
    if not left & right:
        return f"types {sorted(left)} / {sorted(right)}"
    a, b = resolve(document, first), resolve(document, second)
    if left == right == {"object"}:
        for name in set(a.get("required", [])) & set(b.get("required", [])):
            ours, theirs = constants(document, a["properties"][name]), constants(document, b["properties"][name])
            if ours is not None and theirs is not None and not ours & theirs:
                return f"{name}: {sorted(ours)} / {sorted(theirs)}"
        for one, other in ((a, b), (b, a)):
            for name in one.get("required", []):
                if other.get("additionalProperties") is False and name not in other.get("properties", {}):
                    return f"only one may have {name!r}"
    if {"oneOf", "anyOf"} & (set(a) | set(b)):
        union, single = (a, b) if {"oneOf", "anyOf"} & set(a) else (b, a)
        branches = union.get("oneOf") or union.get("anyOf")
        if all(told_apart(document, branch, single) for branch in branches):
            return "from every branch of the union"
    return None


def unions(node: object, where: str = "#") -> list[tuple[str, dict]]:
    found = []
    if isinstance(node, dict):
        if "oneOf" in node:
            found.append((where, node))
        for key, value in node.items():
            found.extend(unions(value, f"{where}/{key}"))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(unions(value, f"{where}[{index}]"))
    return found


EACH_VERSION = pytest.mark.parametrize("name", [version.name for version in SERVED.all])


@EACH_VERSION
def test_no_oneof_has_overlapping_branches(name: str) -> None:
    document = json.loads((OPENAPI / f"{name}.json").read_text())
    found = unions(document)
    assert len(found) >= 10, "the moves, events, deal sources and deal requests are oneOfs"
    overlapping = [
        (where, first, second)
        for where, schema in found
        for i, first in enumerate(schema["oneOf"])
        for second in schema["oneOf"][i + 1 :]
        if told_apart(document, first, second) is None
    ]
    assert not overlapping, overlapping


@EACH_VERSION
def test_every_discriminator_maps_exactly_its_branches_to_their_constants(name: str) -> None:
    document = json.loads((OPENAPI / f"{name}.json").read_text())
    tagged = [(where, schema) for where, schema in unions(document) if "discriminator" in schema]
    assert {where.rsplit("/", 1)[-1] for where, _ in tagged} >= {
        "MoveRequest",
        "EventView",
        "DealSource",
        "RevertedEvent",
    }
    for where, schema in tagged:
        tag, mapping = schema["discriminator"]["propertyName"], schema["discriminator"]["mapping"]
        assert sorted(mapping.values()) == sorted(branch["$ref"] for branch in schema["oneOf"]), where
        for value, reference in mapping.items():
            branch = resolve(document, {"$ref": reference})
            assert tag in branch["required"], (where, reference)
            assert branch["properties"][tag]["const"] == value == branch["properties"][tag]["default"], (where, value)


def test_the_move_request_is_the_legal_moves_and_hints_schema() -> None:
    schemas = json.loads(COMMITTED.read_text())["components"]["schemas"]
    move = {"$ref": "#/components/schemas/MoveRequest"}
    assert schemas["LegalMoves"]["properties"]["moves"]["items"] == move
    assert schemas["HintView"]["properties"]["move"] == move
    assert move in schemas["SolverHint"]["properties"]["move"]["oneOf"]
    assert [branch["$ref"].rsplit("/", 1)[-1] for branch in schemas["MoveRequest"]["oneOf"]] == [
        "Draw", "Recycle", "Undo", "Resign", "MoveCard",
    ]
    assert schemas["MoveCard"]["required"] == ["card", "to", "type"]
    analysed = [branch["$ref"].rsplit("/", 1)[-1] for branch in schemas["AnalysedMove"]["oneOf"]]
    assert schemas["TurningPoint"]["properties"]["move"] == {"$ref": "#/components/schemas/AnalysedMove"}
    assert analysed == ["Draw", "Recycle", "Undo", "Resign", "MoveCard", "AbandonMove"]  # the same classes, and one
    assert schemas["MoveCard"]["additionalProperties"] is False


def test_the_schemas_name_every_event_move_target_and_ruleset_of_the_domain() -> None:
    """A new event type, move, pile or ruleset in the domain cannot slip past the document."""
    from typing import get_args, get_type_hints

    import msgspec

    from domain import ALL_RULESETS
    from domain.commands import MOVE_TYPES
    from domain.events import EVENT_TYPES
    from domain.piles import TARGETS
    from service.http import schemas

    def tags(union: object) -> set[str]:
        return {str(msgspec.inspect.type_info(member).tag) for member in get_args(union)}  # type: ignore[union-attr]

    assert tags(schemas.EventView) == set(EVENT_TYPES)
    assert tags(schemas.RevertedEvent) == {"StockDrawn", "WasteRecycled", "CardsMoved", "ReserveRefilled"}
    assert tags(schemas.MoveRequest) == set(MOVE_TYPES)
    from domain import Abandon, command_to_api

    # an analysis's turning point: a player's move, or the service's abandonment as the domain names it
    assert tags(schemas.AnalysedMove) == {*MOVE_TYPES, command_to_api(Abandon(31))["type"]}
    assert set(get_args(schemas.Target)) == set(TARGETS)
    assert {ruleset.value for ruleset in schemas.RulesetId} == {ruleset.id for ruleset in ALL_RULESETS}
    from domain.lessons import BY_ID as LESSONS
    from domain.lessons import SOURCE as LESSON_SOURCE
    from service.races.races import SOURCE as RACE_SOURCE
    from service.tournaments.standings import SOURCE as TOURNAMENT_SOURCE

    assert tags(schemas.DealSource) == {"seed", "deck", "pool", "daily", LESSON_SOURCE, RACE_SOURCE, TOURNAMENT_SOURCE}
    assert set(schemas.DEAL_REQUESTS) == {"seed", "deck", "pool", "daily", LESSON_SOURCE}
    assert {lesson.value for lesson in schemas.LessonId} == set(LESSONS)
    # A race's deal is one a game could be dealt by too, or (none named) the server's secret deal, and
    # shows only its source while the race runs.
    from service.races.race_deals import SECRET_SOURCE

    assert set(schemas.RACE_DEAL_REQUESTS) == {"seed", "deck", "pool", SECRET_SOURCE}
    assert tags(schemas.RaceDeal) == set(schemas.RACE_DEAL_REQUESTS)
    requests = {**schemas.DEAL_REQUESTS, **schemas.RACE_DEAL_REQUESTS}.items()
    assert all(msgspec.inspect.type_info(kind).tag == source for source, kind in requests)  # type: ignore[attr-defined]
    assert set(get_args(get_type_hints(schemas.SourceTotals)["source"])) <= tags(schemas.DealSource)


def test_request_types_are_named_as_requests_and_keep_their_component_names() -> None:
    """In Python a request body is a ``...Request``; in the document it keeps the component name
    generated clients already call it by (``NewGame``, ``MoveCard``)."""
    from service.http import schemas
    from service.http.openapi.structs import component_name

    components = set(json.loads(COMMITTED.read_text())["components"]["schemas"])
    requests = [
        kind for kind in vars(schemas).values()
        if isinstance(kind, type) and issubclass(kind, schemas.RequestBody) and kind is not schemas.RequestBody
    ]
    assert [kind.__name__ for kind in requests if not kind.__name__.endswith("Request")] == []
    assert {component_name(kind) for kind in requests} <= components
    renamed = {kind.__name__: component_name(kind) for kind in requests if component_name(kind) != kind.__name__}
    assert set(renamed.values()) == {
        "NewPlayer", "NewGame", "NewRace", "NewTournament", "Draw", "Recycle", "Undo", "Resign", "MoveCard"}
    assert not set(renamed) & components
