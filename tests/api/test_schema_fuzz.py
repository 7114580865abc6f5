"""Schema fuzzing: schemathesis against the live OpenAPI document of a running server.

Every operation of the document the server serves at ``/schema/openapi.json`` gets generated
requests sent to a real server on real PostgreSQL:

* ``test_fuzz``: up to ``MAX_EXAMPLES`` requests per operation from schemathesis's hypothesis
  strategies, valid ones (positive) and ones that break the schema (negative);
* ``test_boundaries``: up to ``MAX_COVERAGE_CASES`` of schemathesis's deterministic "coverage"
  cases per operation (boundary values, missing and wrong-typed parameters, unexpected methods).

Each response must:

* never be a 5xx;
* conform to the document (schemathesis's checks): a documented status code, its documented
  content type, a body that matches its schema, the documented headers; schema-valid input is
  not refused with a 400 the document could have ruled out, schema-invalid input is refused;
* be ``application/problem+json`` with a stable ``code`` (and ``status`` the HTTP status)
  whenever it is a 4xx.

To get past ``401`` and ``404`` into the real handlers, a generated game or player id is swapped
for a real one (a game in progress, a finished game, someone else's game) most of the time, and
writes carry the player's bearer token (or another player's, or none). The choice is a hash of
the generated case, so a failing example replays the same way. A move that ends the game in
progress gets a new one dealt, so moves keep reaching the rules.

``GET /games/{id}/stream`` is pointed only at finished games (or unknown ids): a live game's stream
never ends by itself. A finished game's stream sends its view and ``end``, then closes.
A watch (``GET``/``POST /watch``) never ends by itself either: each of its requests is sent once
as a stream, and an opened watch is checked (``text/event-stream``, ``watching`` first) and
closed; any other answer is complete, and is sent again to be checked as every other is.

The pytest plugin of schemathesis (``schemathesis.pytest.from_fixture``) does not run under pytest
9.2 (it sets ``Node._nodeid``, which pytest removed), so the operations are parametrized here from
the committed document (``test_openapi.py`` checks it is the live one, and
``test_the_fuzzed_operations_are_the_live_ones`` that none is left out), and each test loads the
live document from the running server and uses schemathesis's public strategies and checks.

Runtime: about half a minute on 2 cores (25 examples an operation). ``CANFIELD_FUZZ_EXAMPLES=500``
(and ``CANFIELD_FUZZ_SEED=<n>`` for other examples than the fixed ones) digs deeper;
``CANFIELD_FUZZ_REPORT=1`` with ``-s`` prints the statuses each operation answered with.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import hypothesis
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import positive_data_acceptance
from schemathesis.core.parameters import ParameterLocation
from schemathesis.core.result import Ok

from .conftest import Player, running_server, server_settings

MAX_EXAMPLES = int(os.environ.get("CANFIELD_FUZZ_EXAMPLES", "25"))
MAX_COVERAGE_CASES = 2 * MAX_EXAMPLES
SEED = os.environ.get("CANFIELD_FUZZ_SEED")
STATUSES: Counter[tuple[str, int]] = Counter()  # (operation, status) seen, for CANFIELD_FUZZ_REPORT
COMMITTED = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"
OPERATIONS = sorted(
    operation["operationId"]
    for item in json.loads(COMMITTED.read_text())["paths"].values()
    for operation in item.values()
    if isinstance(operation, dict) and "operationId" in operation
)
STREAM = "streamGame"
RACE_STREAM = "streamRace"
WATCH = {"watchGames", "watchGamesPost"}
ACCOUNT_STREAM = "streamMyEvents"  # a live account stream never ends: fuzzed without a token (401) or a bad id (400)
# The rules no schema can state (the document gives them in descriptions): a request the document
# allows may still be refused with a 400 for one of these, and only these, reasons.
SEMANTIC_400 = re.compile(
    "|".join(
        [
            r"is not out yet",  # a daily date after today
            r"daily deals go back",  # ... or before the offered window
            r"is not a date",  # a YYYY-MM-DD that is no calendar date (2026-02-30)
            r"pool deals run from 1 to",  # a pool number past the pool's size
            r"has no verified deal pool",  # a ruleset without a pool
            r"the daily deal is played under",  # a daily deal under another ruleset
            r"a player name needs at least one visible character",
            r"a token name needs at least one visible character",
            r"name may not hold invisible or text-direction characters",  # Unicode format characters
            r"the name deleted accounts keep",  # 'deleted player' or a look-alike of it (TR39 skeletons)
            r"'until' must be later than 'since'",  # an empty window
            r"Idempotency-Key was already used for a different (?:move|request)",  # a key reused for another
            r"there is no version \d+ to resume after",  # resuming a stream past the game's version
            r"must be a game version, 0 \.\. ",  # a version past 2^31 - 1
            r"is not a cursor of (this|your) ",  # a cursor the list or export did not give
            r"a rated race needs a secret deal",  # a rated race with a deal named
            r"'startsAt' has passed|'startsAt' is more than",  # a tournament's start in the past, or too far ahead
            r"the lessons are played under",  # a lesson deal under another ruleset than classic
            r"a watch needs at least one game or player id",  # neither list has an id
            r"a watch takes at most \d+ distinct ids",  # both lists hold 300 at most, not together
            # the coverage phase sends Last-Event-ID: 0 as valid, though the watch's pattern asks for <game>:<version>
            r"Last-Event-ID must be the id of a watch's message",
            r"the webhook URL",  # a webhook URL the schema allows that is not http(s), too long or private
        ]
    )
)


@dataclass
class World:
    """Real resources the generated requests are pointed at."""

    url: str
    http: httpx.Client
    ann: Player
    bob: Player
    playing: str  # a game of ann's in progress (moves are fuzzed on it)
    finished: str  # a game of ann's she resigned
    bobs: str  # bob's game in progress
    races: tuple[str, str, str]  # ann's races: open, running (bob's in it), finished

    def renew(self) -> None:
        """Deal ann a new game once the one in progress has ended."""
        if self.http.get(f"/games/{self.playing}").json()["status"] != "playing":
            self.playing = self.ann.new_game(deal={"seed": 7})["id"]


@pytest.fixture(scope="module")
def fuzz_server(database_url: str) -> Iterator[str]:
    """A server of its own: a short solver budget (hints with ?solver=true), limits never reached."""
    with running_server(server_settings(database_url, solver_hint_seconds=0.05)) as url:
        yield url


@pytest.fixture(scope="module")
def api_schema(fuzz_server: str) -> Any:
    """The live document, as the running server serves it."""
    config = schemathesis.Config.from_dict(
        {
            "seed": int(SEED or 20_260_101),
            "cache": {"enabled": False},
            "request-timeout": 30,  # a race without a deal waits for its proof
            "checks": {
                # A valid move may still be illegal (422), late (409) or at another version (412),
                # a pool or daily deal may not exist (404): the document cannot rule those out.
                "positive_data_acceptance": {
                    "expected-statuses": ["2xx", "3xx", "401", "403", "404", "409", "412", "422"]
                },
            },
        }
    )
    return schemathesis.openapi.from_url(f"{fuzz_server}/schema/openapi.json", config=config)


@pytest.fixture(scope="module", autouse=True)
def _report() -> Iterator[None]:
    """With CANFIELD_FUZZ_REPORT=1 (and -s): the statuses each operation answered with."""
    yield
    if os.environ.get("CANFIELD_FUZZ_REPORT"):
        for label in sorted({label for label, _ in STATUSES}):
            seen = sorted((status, count) for (where, status), count in STATUSES.items() if where == label)
            print(f"{label:45} " + " ".join(f"{status}x{count}" for status, count in seen))


@pytest.fixture
def world(fuzz_server: str, clean_database: str) -> Iterator[World]:
    with httpx.Client(base_url=fuzz_server, timeout=30) as http:
        ann, bob = Player(http, "Ann"), Player(http, "Bob")
        playing = ann.new_game(deal={"seed": 7})["id"]
        finished = ann.new_game(deal={"seed": 8})["id"]
        assert ann.move(finished, {"type": "resign"}).status_code == 200
        bobs = bob.new_game(deal={"seed": 9})["id"]
        yield World(fuzz_server, http, ann, bob, playing, finished, bobs, _races(ann, bob))


def _races(ann: Player, bob: Player) -> tuple[str, str, str]:
    """An open race, a running one and a finished one, all ann's, bob in the last two."""
    made = []
    for number in range(3):  # named deals: no solver proof to wait for (tests/api/test_race_deals.py has those)
        body = {"maxEntrants": 2, "ruleset": "classic", "deal": {"seed": 100 + number}}
        response = ann.client.post("/races", json=body, headers=ann.auth)
        assert response.status_code == 201, response.text
        made.append(response.json()["id"])
    for race_id in made[1:]:
        assert bob.client.post(f"/races/{race_id}/entries", json={}, headers=bob.auth).status_code == 201
        started = ann.client.post(f"/races/{race_id}/start", json={}, headers=ann.auth).json()
        if race_id == made[2]:
            for entrant in started["entrants"]:
                for who in (ann, bob):
                    if who.id == entrant["player"]:
                        assert who.move(entrant["game"], {"type": "resign"}).status_code == 200
    return made[0], made[1], made[2]


def _pick(case: schemathesis.Case, salt: str, choices: list[Any]) -> Any:
    seen = repr(
        (
            salt, case.method, case.path, case.path_parameters, case.query,
            sorted(dict(case.headers or {}).items()),
            case.body,
        )
    )
    return choices[zlib.crc32(seen.encode("utf-8", "surrogatepass")) % len(choices)]


def aim(case: schemathesis.Case, world: World) -> None:
    """Point the case at real resources (most of the time) and give writes a token."""
    params = case.path_parameters or {}
    if not (case.meta is not None and case.meta.is_negative_at(ParameterLocation.PATH)):
        # Only valid values are swapped for other valid values: a negative case stays negative.
        operation_id = case.operation.definition.raw.get("operationId")
        # A live game's stream would never end.
        games = [world.finished] * 3 if operation_id == STREAM else [world.playing] * 3 + [world.finished, world.bobs]
        races = [world.races[2]] * 3 if operation_id == RACE_STREAM else list(world.races)  # likewise a live race
        real: dict[str, list[Any]] = {
            "game_id": games,
            "player_id": [world.ann.id, world.ann.id, world.bob.id],
            "ruleset_id": ["classic", "draw-one", "open-runs"],
            "version": [1, 2, 3],
            "number": [1, 2],
            "day": ["today"],
            "race_id": races,
            "lesson_id": ["base-rank", "wrapping", "reserve-refill", "draw-three-stock"],
        }
        for name, values in real.items():
            if name in params:
                params[name] = _pick(case, name, [*values, params[name]])
    if case.method.upper() == "POST" or case.path.endswith(("/hints", "/stream")):
        if case.headers is None:
            case.headers = {}
        if case.operation.schema.is_security_param_negated(case):
            return  # schemathesis broke the credentials on purpose
        token = _pick(case, "token", [world.ann.token] * 4 + [world.bob.token, None, "generated"])
        if case.operation.definition.raw.get("operationId") == ACCOUNT_STREAM:
            token = None
        if token != "generated":
            for name in [name for name in case.headers if name.lower() == "authorization"]:
                del case.headers[name]
            if token is not None:
                case.headers["Authorization"] = f"Bearer {token}"


def opened_a_watch(case: schemathesis.Case, world: World) -> bool:
    """Send a watch request as a stream (with requests, as schemathesis sends every case): True
    (checked and closed) if it opened a watch."""
    with requests.request(**case.as_transport_kwargs(base_url=world.url), stream=True, timeout=30) as response:
        if response.status_code != 200:
            return False
        assert response.headers["content-type"].startswith("text/event-stream"), response.headers
        assert next(response.iter_lines()) == b"event: watching"
        STATUSES[(case.operation.label, 200)] += 1
        return True


def exercise(case: schemathesis.Case, world: World) -> None:
    aim(case, world)
    if case.operation.definition.raw.get("operationId") in WATCH and opened_a_watch(case, world):
        return
    response = case.call(base_url=world.url, timeout=30)
    STATUSES[(case.operation.label, response.status_code)] += 1
    where = f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:300]}"
    assert response.status_code < 500, where
    if 400 <= response.status_code < 500:
        content_type = {k.lower(): v for k, v in response.headers.items()}.get("content-type", [""])[0]
        assert content_type.startswith("application/problem+json"), where
        body = response.json()
        assert isinstance(body, dict), where
        assert isinstance(body.get("code"), str), where
        assert body["code"], where
        assert body.get("status") == response.status_code, where
    semantic = response.status_code == 400 and SEMANTIC_400.search(response.json().get("detail", ""))
    case.validate_response(response, excluded_checks=[positive_data_acceptance] if semantic else None)
    if case.path.endswith("/moves") and response.status_code == 200:
        world.renew()


def test_the_fuzzed_operations_are_the_live_ones(api_schema: Any) -> None:
    results = list(api_schema.get_all_operations())
    assert all(isinstance(result, Ok) for result in results), [
        result for result in results if not isinstance(result, Ok)
    ]
    assert sorted(result.ok().definition.raw["operationId"] for result in results) == OPERATIONS


@pytest.mark.slow
@pytest.mark.parametrize("operation_id", OPERATIONS)
def test_fuzz(operation_id: str, api_schema: Any, world: World) -> None:
    operation = api_schema.find_operation_by_id(operation_id)
    cases = st.one_of(operation.as_strategy(GenerationMode.POSITIVE), operation.as_strategy(GenerationMode.NEGATIVE))

    @hypothesis.settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        database=None,
        derandomize=SEED is None,
        suppress_health_check=list(HealthCheck),
        phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate, hypothesis.Phase.shrink],
    )
    @hypothesis.given(case=cases)
    def run(case: schemathesis.Case) -> None:
        exercise(case, world)

    (hypothesis.seed(int(SEED))(run) if SEED else run)()


@pytest.mark.slow
@pytest.mark.parametrize("operation_id", OPERATIONS)
def test_boundaries(operation_id: str, api_schema: Any, world: World) -> None:
    operation = api_schema.find_operation_by_id(operation_id)
    cases = api_schema.iter_coverage_cases(
        operation, generation_modes=list(GenerationMode), generation_config=api_schema.config.generation
    )
    for case in itertools.islice(cases, MAX_COVERAGE_CASES):
        exercise(case, world)
