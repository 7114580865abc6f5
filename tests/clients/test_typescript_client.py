"""TypeScript clients: types generated from ``openapi/openapi.json`` (the oldest version) by
openapi-typescript and by @hey-api/openapi-ts, and from the newest version's document
(``openapi/2026-12-05.json``) by openapi-typescript, a small client written against each
(``ts/client.ts``, ``ts/hey-client.ts``, ``ts/newest-client.ts``) checked by ``tsc --strict`` in one
run, then run against a real server with ``Api-Version`` set once: the oldest's sends a listed legal
move back as it came and plays on from the legal moves to the game's end (resigning a game still
in progress after 40 moves); the newest's deals by a tagged seed request, plays moves from the
legal moves and resigns (the game ends), pages the log by ``cursor``/``next`` and reads its race
in the lobby and the race's view with player references. And every version's document passes
Redocly's recommended lint with no error and no warning.

The npm packages are pinned in ``ts/package.json`` and its lock; ``npm ci`` installs them when
``ts/node_modules`` is missing or older than the lock. Without ``node`` and ``npm`` these tests are
skipped, loudly: the rest of the suite needs only Python.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from service.http.versions import NEWEST, OLDEST, SERVED
from tests.api.conftest import Player

HERE = Path(__file__).resolve().parent / "ts"
PINNED = OLDEST
"""The version of openapi/openapi.json (the oldest served, which a request without Api-Version gets)."""
OPENAPI = Path(__file__).resolve().parents[2] / "openapi"
DOCUMENT = OPENAPI / "openapi.json"
NEWEST_DOCUMENT = OPENAPI / f"{NEWEST.name}.json"
BIN = HERE / "node_modules" / ".bin"
STAMP = HERE / "node_modules" / ".canfield-lock-sha256"
INSTALL_LOCK = HERE / ".npm-install.lock"
MISSING = [tool for tool in ("node", "npm") if shutil.which(tool) is None]

pytestmark = pytest.mark.skipif(
    bool(MISSING),
    reason=f"SKIPPED, NOT CHECKED: {' and '.join(MISSING)} not installed, so the TypeScript clients generated from "
    "openapi/openapi.json were not type-checked and the document was not linted (install Node.js 20+ to run them)",
)


def run(command: list[str], cwd: Path, timeout: float = 300) -> str:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    said = result.stdout + result.stderr
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{said[-4000:]}"
    return said


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """The pinned packages, installed from the lock (again only when the lock changed)."""
    lock = hashlib.sha256((HERE / "package-lock.json").read_bytes()).hexdigest()
    # The suite's workers (pytest-xdist, --dist worksteal) may run this module's tests at once,
    # each with its own copy of this fixture. `npm ci` first deletes node_modules, so a second
    # install would pull the packages from under the first worker's generators: one worker
    # installs while the others wait on this lock, then find the stamp and go on.
    with INSTALL_LOCK.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not (STAMP.exists() and STAMP.read_text() == lock):
            run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], HERE, timeout=600)
            STAMP.write_text(lock)
    return BIN


@pytest.fixture(scope="module")
def compiled(node_modules: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both generators' output of the oldest document, openapi-typescript's of the newest, and the
    three clients, compiled by one tsc --strict run in a temporary folder."""
    folder = tmp_path_factory.mktemp("typescript")
    for name in ("client.ts", "hey-client.ts", "newest-client.ts", "tsconfig.json"):
        shutil.copy(HERE / name, folder / name)
    run([str(node_modules / "openapi-typescript"), str(DOCUMENT), "--output", "generated/openapi.ts"], folder)
    run([str(node_modules / "openapi-typescript"), str(NEWEST_DOCUMENT), "--output", "generated/newest.ts"], folder)
    hey = run([str(node_modules / "openapi-ts"), "--input", str(DOCUMENT), "--output", "hey", "--plugins",
               "@hey-api/typescript", "--no-log-file"], folder)  # fmt: skip
    assert "warn" not in hey.lower(), hey
    assert "error" not in hey.lower(), hey
    run([str(node_modules / "tsc"), "--project", "tsconfig.json"], folder)  # tsconfig.json: strict and more
    return folder


def test_the_typescript_clients_type_check_against_both_generators(compiled: Path) -> None:
    types = (compiled / "generated" / "openapi.ts").read_text()
    assert 'type: "draw"' in types
    assert '"/games/{game_id}/events.ndjson"' in types
    assert (compiled / "out" / "client.js").exists()
    assert (compiled / "out" / "hey-client.js").exists()
    newest = (compiled / "generated" / "newest.ts").read_text()
    assert 'source: "seed"' in newest  # the newest's deal requests are tagged
    assert "PlayerRef: {" in newest
    assert (compiled / "out" / "newest-client.js").exists()


def test_the_typescript_client_sends_a_listed_move_back(compiled: Path, ann: Player, server_url: str) -> None:
    game = ann.new_game(ruleset="classic", deal={"seed": 11})
    said = run(["node", str(compiled / "out" / "client.js"), server_url, ann.token, game["id"], PINNED.name], compiled,
               timeout=60)  # fmt: skip
    reply = json.loads(said.strip().splitlines()[-1])
    assert reply["status"] == 200, reply
    assert reply["versions"] == [PINNED.name, PINNED.name], reply  # set once on the client, sent with each request
    assert reply["version"] == game["version"] + 1, reply
    assert reply["events"]
    final = reply["final"]  # played on from the legal moves, resigned if still in progress: the game ended
    assert final["status"] in ("won", "stalled", "resigned"), reply
    assert final["finishedAt"] is not None
    assert final["moveCount"] > 1, "the client played more than its first move"
    view = ann.client.get(f"/games/{game['id']}").json()
    assert (view["status"], view["version"]) == (final["status"], final["version"])
    listed = ann.client.get(f"/games/{game['id']}/events").json()["events"][-1]
    assert listed["version"] == final["version"]


def test_the_newest_typescript_client_plays_pages_and_reads_a_race(
    compiled: Path, server_url: str, client: httpx.Client  # ``client``: an emptied database
) -> None:
    said = run(["node", str(compiled / "out" / "newest-client.js"), server_url, NEWEST.name], compiled, timeout=60)
    seen = json.loads(said.strip().splitlines()[-1])
    assert seen["versions"] == [NEWEST.name]  # set once on the client, answered in it by every request
    assert seen["dealt"] == {"source": "seed", "seed": 7}
    assert seen["gamePlayer"] == {"id": seen["player"], "name": "Typed Newest", "bot": False}
    assert seen["gameVersion"] > 1, "no move was played"
    assert seen["gameStatus"] in ("won", "stalled", "resigned"), "the game was played to its end"
    assert seen["finishedAt"] is not None
    assert seen["moveCount"] > 1
    assert seen["events"] == list(range(1, seen["gameVersion"] + 1))  # every event once, page by page
    assert len(seen["links"]) == -(-seen["gameVersion"] // 5)
    assert all('rel="next"' in link for link in seen["links"][:-1])
    assert seen["links"][-1] is None
    assert seen["lobby"] == ["Typed Newest"]
    assert seen["lobbyNext"] is None
    race = seen["race"]
    assert race["creator"] == seen["gamePlayer"]
    assert race["standings"] == ["- Typed Newest: not dealt"]
    assert (race["over"], race["deal"]) == (False, {"source": "secret"})


def test_every_versions_document_passes_redocly_lint_without_a_warning(node_modules: Path) -> None:
    documents = [DOCUMENT, *(OPENAPI / f"{version.name}.json" for version in SERVED.all)]
    said = run([str(node_modules / "redocly"), "lint", *map(str, documents), "--format", "json"], HERE)
    reports, text, at = [], said[said.index("{") : said.rindex("}") + 1], 0
    while at < len(text):  # one JSON report per document, one after another
        report, at = json.JSONDecoder().raw_decode(text, at)
        reports.append(report)
    assert len(reports) == len(documents)
    for document, report in zip(documents, reports, strict=True):
        problems = [(p["ruleId"], p["severity"], p["message"]) for p in report["problems"]]
        assert problems == [], (document.name, problems)
        assert report["totals"] == {"errors": 0, "warnings": 0, "ignored": 0}, document.name

