"""TypeScript clients: types generated from ``openapi/openapi.json`` by openapi-typescript and by
@hey-api/openapi-ts, a small client written against each (``ts/client.ts``, ``ts/hey-client.ts``)
checked by ``tsc --strict``, then run against a real server: it sends a listed legal move back as
it came. And the document passes Redocly's recommended lint with no error and no warning.

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

import pytest

from service.http.versions import OLDEST
from tests.api.conftest import Player

HERE = Path(__file__).resolve().parent / "ts"
PINNED = OLDEST
"""The version of openapi/openapi.json (the oldest served, which a request without Api-Version gets)."""
DOCUMENT = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"
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
    """Both generators' output and both clients, compiled by tsc --strict in a temporary folder."""
    folder = tmp_path_factory.mktemp("typescript")
    for name in ("client.ts", "hey-client.ts", "tsconfig.json"):
        shutil.copy(HERE / name, folder / name)
    run([str(node_modules / "openapi-typescript"), str(DOCUMENT), "--output", "generated/openapi.ts"], folder)
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


def test_the_typescript_client_sends_a_listed_move_back(compiled: Path, ann: Player, server_url: str) -> None:
    game = ann.new_game(ruleset="classic", deal={"seed": 11})
    said = run(["node", str(compiled / "out" / "client.js"), server_url, ann.token, game["id"], PINNED.name], compiled,
               timeout=60)  # fmt: skip
    reply = json.loads(said.strip().splitlines()[-1])
    assert reply["status"] == 200, reply
    assert reply["versions"] == [PINNED.name, PINNED.name], reply  # set once on the client, sent with each request
    assert reply["version"] == game["version"] + 1, reply
    listed = ann.client.get(f"/games/{game['id']}/events").json()["events"][-1]
    assert reply["events"]
    assert listed["version"] == reply["version"]


def test_the_document_passes_redocly_lint_without_a_warning(node_modules: Path) -> None:
    said = run([str(node_modules / "redocly"), "lint", str(DOCUMENT), "--format", "json"], HERE)
    report = json.loads(said[said.index("{") : said.rindex("}") + 1])
    problems = [(p["ruleId"], p["severity"], p["message"]) for p in report["problems"]]
    assert problems == [], problems
    assert report["totals"] == {"errors": 0, "warnings": 0, "ignored": 0}

