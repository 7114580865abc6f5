"""The previous release, for the deploy tests (tests/integration/test_deploy.py): its code, its
own virtual environment, its smoke tests.

A release is a commit that adds a migration. The previous release is the code that served
before the newest one: the parent of the newest commit in this checkout's history that moved the
migration head, provided its migrations form one chain (every ``down_revision`` present). A
parent whose chain is broken (0013 was committed after 0014-0016, so the commits between them
name a 0013 they do not hold) was never deployable, and the search goes on to the release
before. ``CANFIELD_PREVIOUS_RELEASE=<commit>`` names it instead.

* The code: ``git archive`` of that commit, unpacked once into the cache (no worktree is
  registered in the repository; the files are the commit's).
* Its environment: a virtualenv made from that commit's own ``requirements/dev.lock`` with
  ``pip --require-hashes`` (pip's own cache is reused), kept in the cache under the lock's hash
  and the Python version: built once, then reused by every later run and every later release
  with the same lock. The project is not installed into it: the old code runs from its folder
  (``cwd`` and ``PYTHONPATH``), without the optional C extension of the solver.
* The cache: ``$CANFIELD_CACHE_DIR``, else ``$XDG_CACHE_HOME/canfield``, else
  ``~/.cache/canfield``; a lock file serialises the pytest workers that build at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

from service.store.embedded_runtime import file_lock
from tests.live import PROJECT_ROOT

MIGRATIONS = "migrations/versions"

SMOKE_MARKER = "smoke"
FALLBACK_SMOKE_TESTS = (
    "tests/api/test_games.py::test_a_seed_deal_is_the_documented_shuffle",
    "tests/api/test_games.py::test_legal_moves_and_hints_use_the_move_format",
    "tests/api/test_moves.py::test_a_card_move_and_its_undo_are_both_in_the_log",
    "tests/api/test_moves.py::test_an_illegal_move_is_422_with_a_reason_and_changes_nothing",
    "tests/api/test_moves.py::test_an_idempotency_key_returns_the_first_result_and_appends_nothing",
    "tests/api/test_idempotency.py::test_races_create_join_and_start_replay",
    "tests/api/test_races.py::test_entrants_moves_are_ordinary_moves",
    "tests/api/test_players_and_rulesets.py::test_a_new_player_gets_a_token_shown_once",
    "tests/api/test_tokens.py::test_a_revoked_token_is_refused_at_once_and_others_stay",
    "tests/api/test_streams.py::test_each_change_is_followed_by_the_new_view_undo_included",
    "tests/api/test_events_and_replay.py::test_every_past_state_is_a_replay_of_the_log",
    "tests/api/test_pagination.py::test_lobby_pages_see_every_open_race_once_while_races_are_opened",
)
"""The smoke subset of a release from before the ``smoke`` marker (the tests marked ``smoke``
now, each present under this name since before migration 0013)."""


class NoPreviousRelease(Exception):
    """The history cannot give the previous release (a shallow clone, no release before)."""


@dataclass(frozen=True)
class Release:
    commit: str
    head: str  # its newest migration
    tree: Path  # its files
    python: Path  # its virtualenv's interpreter
    uvicorn_arguments: tuple[str, ...]  # its server options for uvicorn's command line

    def env(self) -> dict[str, str]:
        """The environment for its code: its own folder first on the path, nothing of this session's
        pytest (its workers' variables) nor of this virtualenv."""
        keep = {k: v for k, v in os.environ.items()
                if not k.startswith(("PYTEST_", "PYTHON", "VIRTUAL_ENV", "COV_"))}
        return {**keep, "PYTHONPATH": str(self.tree), "PYTHONDONTWRITEBYTECODE": "1"}

    def has_smoke_marker(self) -> bool:
        """Whether its pytest configuration registers the ``smoke`` marker (and so marks tests)."""
        config = tomllib.loads((self.tree / "pyproject.toml").read_text())
        markers = config.get("tool", {}).get("pytest", {}).get("ini_options", {}).get("markers", [])
        return any(str(m).split(":")[0].strip() == SMOKE_MARKER for m in markers)


def cache_dir() -> Path:
    explicit = os.environ.get("CANFIELD_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "canfield"


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=PROJECT_ROOT, check=True, capture_output=True, text=True).stdout


def _chain_head(commit: str) -> str | None:
    """The newest migration at ``commit`` if its migrations form one chain (each revision once, each
    ``down_revision`` present, one head), else None."""
    names = _git("ls-tree", "--name-only", f"{commit}:{MIGRATIONS}").split()
    links: dict[str, str | None] = {}
    for name in names:
        if not name.endswith(".py") or name.startswith("__"):
            continue
        text = _git("show", f"{commit}:{MIGRATIONS}/{name}")
        revision = re.search(r'^revision\s*=\s*"(\w+)"', text, re.M)
        down = re.search(r'^down_revision\s*=\s*(?:"(\w+)"|None)', text, re.M)
        if revision is None or down is None or revision.group(1) in links:  # none, or one given twice
            return None
        links[revision.group(1)] = down.group(1)
    if not links or any(down is not None and down not in links for down in links.values()):
        return None
    heads = set(links) - {down for down in links.values() if down is not None}
    return heads.pop() if len(heads) == 1 else None


def find_previous_commit() -> tuple[str, str]:
    """(commit, its newest migration) of the previous release of the checked-out code."""
    try:
        shallow = _git("rev-parse", "--is-shallow-repository").strip() == "true"
    except (OSError, subprocess.CalledProcessError) as error:
        raise NoPreviousRelease(f"NOT A GIT CHECKOUT (or no git): {error}") from None
    if shallow:
        raise NoPreviousRelease(
            "THIS CLONE IS SHALLOW: the previous release's commit is not in it. Clone with the full "
            "history (plain `git clone`, or `fetch-depth: 0` on CI), or `git fetch --unshallow`.")
    named = os.environ.get("CANFIELD_PREVIOUS_RELEASE")
    if named:
        commit = _git("rev-parse", "--verify", f"{named}^{{commit}}").strip()
        head = _chain_head(commit)
        if head is None:
            raise NoPreviousRelease(f"CANFIELD_PREVIOUS_RELEASE={named}: its migrations are not one chain")
        return commit, head
    current = _chain_head("HEAD")
    if current is None:
        raise NoPreviousRelease("the checked-out migrations are not one chain")
    for commit in _git("log", "--format=%H", "HEAD", "--", MIGRATIONS).split():
        parents = _git("log", "-1", "--format=%P", commit).split()
        if not parents:
            break
        head = _chain_head(parents[0])
        if head is not None and head != current:
            return parents[0], head
    raise NoPreviousRelease(f"no commit before migration {current} has a complete chain of migrations")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(path):
        yield


def _tree(commit: str) -> Path:
    target = cache_dir() / "releases" / commit
    with _locked(target.with_suffix(".lock")):
        if not (target / ".complete").exists():
            shutil.rmtree(target, ignore_errors=True)
            archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=PROJECT_ROOT, check=True,
                                     capture_output=True).stdout
            with tarfile.open(fileobj=BytesIO(archive)) as tar:
                tar.extractall(target, filter="data")
            (target / ".complete").touch()
    return target


def _venv(lock: Path) -> Path:
    digest = hashlib.sha256(lock.read_bytes()).hexdigest()[:16]
    target = cache_dir() / "venvs" / f"{digest}-py{sys.version_info[0]}.{sys.version_info[1]}"
    python = target / "bin" / "python"
    with _locked(target.with_suffix(".lock")):
        if not (target / ".complete").exists():
            shutil.rmtree(target, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(target)], check=True, capture_output=True)
            installed = subprocess.run(
                [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--require-hashes",
                 "-r", str(lock)], check=False, capture_output=True, text=True)
            if installed.returncode != 0:
                shutil.rmtree(target, ignore_errors=True)
                raise RuntimeError(f"installing {lock} failed:\n{installed.stdout[-3000:]}{installed.stderr[-3000:]}")
            (target / ".complete").touch()
    return python


def previous_release() -> Release:
    """The previous release, its files and its environment (built the first time, then cached)."""
    commit, head = find_previous_commit()
    tree = _tree(commit)
    python = _venv(tree / "requirements" / "dev.lock")
    return Release(commit, head, tree, python, _uvicorn_arguments(python, tree))


def _uvicorn_arguments(python: Path, tree: Path) -> tuple[str, ...]:
    """What the release's ``service.http.server.uvicorn_arguments`` says (none before it existed)."""
    asked = subprocess.run(
        [str(python), "-c", "from service.http.server import uvicorn_arguments as a; print(' '.join(a()))"],
        check=False, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True, text=True)
    return tuple(asked.stdout.split()) if asked.returncode == 0 else ()
