"""The shell examples of README.md and docs/api.md, run against a live server.

Every ``sh`` block is read as a reader would type it, in document order and in one shell, so a
block may use what an earlier one set: continuation lines joined, ``NAME=...  # the "field" from
the reply`` filled in from the previous reply's JSON member, ``NAME=$(date -u ...)`` as the UTC
time now, other assignments expanded, and every ``curl`` sent to the test server (its ``-X``,
``-H`` and ``-d``; ``-N``, a stream: its answer's status and headers, then it is closed). Every
request must succeed (2xx), or answer the status its trailing comment begins with
(``# 201, ...``); a trailing comment that shows the reply (``# {"ratings": ...}``,
``# ... "plays": 40``) names members the reply must have. curl itself is not needed: the options
the examples use are read here.

The variables a document's text says come from elsewhere (api.md: ``PLAYER``, ``BOB``,
``BOBS_TOKEN``, ``GAME1``, ``GAME2``) are set by ``SETUP`` before its section's first block. A
block that cannot be run is marked just above its fence with ``<!-- not run: <reason> -->``;
``NOT_RUN`` lists each such block, so none is skipped unnoticed.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from service.http.versions import NEWEST

ROOT = Path(__file__).resolve().parents[2]
FROM_REPLY = re.compile(r'^(\w+)=\.\.\.\s+# the "(\w+)" from the reply')
ASSIGNMENT = re.compile(r"^(\w+)=(.*)$")
NOW = "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
BLOCK = re.compile(r"(?ms)^(## [^\n]*)$|(?:^<!-- not run: ([^\n]*?) -->\n)?^```(\w*)\n(.*?)^```")
COMMENT = re.compile(r"\s#\s")
STATUS = re.compile(r"^([1-5][0-9]{2})\b")
SHOWN = re.compile(r'"(\w+)":')

NOT_RUN = {
    ("README.md", "## Quick start"): "it builds and serves the project itself",
    ("README.md", "## Develop and test"): "these build, check and test the project itself",
    ("docs/api.md", "## Following an account: the account stream and webhooks"): "bots.example is no reachable URL",
}
"""The blocks marked ``not run`` in the documents (one per section at most), and why."""


@dataclass
class Block:
    section: str
    lines: list[str]
    not_run: str | None


def blocks(document: Path) -> list[Block]:
    """The document's shell blocks in order, each with its section and its commands, one per line."""
    found: list[Block] = []
    section = ""
    for match in BLOCK.finditer(document.read_text()):
        if match.group(1):
            section = match.group(1)
        elif match.group(3) in ("sh", "shell", "bash"):
            lines = [line.strip() for line in match.group(4).replace("\\\n", " ").splitlines() if line.strip()]
            found.append(Block(section, lines, match.group(2)))
    return found


def walk_through(document: Path) -> list[str]:
    """The commands of the document's curl walk-through, one per line."""
    found = [block for block in blocks(document) if block.section == "## Play a game with curl"]
    assert found, f"{document.name} has no curl walk-through"
    return found[0].lines


@dataclass
class Sent:
    """A command sent and its answer (a stream's: its status and headers, its body unread)."""

    command: str
    response: httpx.Response


def run(commands: list[str], client: httpx.Client, variables: dict[str, str] | None = None,
        before: Callable[[str, dict[str, str]], None] | None = None) -> list[httpx.Response]:
    return [sent.response for sent in run_commands(commands, client, {} if variables is None else variables, before)]


def run_commands(commands: list[str], client: httpx.Client, variables: dict[str, str],
                 before: Callable[[str, dict[str, str]], None] | None = None) -> list[Sent]:
    """Each command in turn (``before``, if given, is called with each curl first); every answer."""
    sent: list[Sent] = []
    for command in commands:
        if command.startswith("#"):
            continue
        from_reply = FROM_REPLY.match(command)
        if from_reply:
            variables[from_reply.group(1)] = sent[-1].response.json()[from_reply.group(2)]
            continue
        now = ASSIGNMENT.match(command)
        if now and now.group(2).startswith(NOW):
            variables[now.group(1)] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            continue
        words = [re.sub(r"\$(\w+)", lambda m: variables[m.group(1)], w) for w in shlex.split(command, comments=True)]
        assignment = ASSIGNMENT.match(words[0])
        if assignment:
            variables[assignment.group(1)] = assignment.group(2)
            continue
        assert words[0] == "curl", f"not a command an example may hold: {command}"
        if before is not None:
            before(command, variables)
        sent.append(Sent(command, _curl(words[1:], client)))
    return sent


def _curl(arguments: list[str], client: httpx.Client) -> httpx.Response:
    method, headers, body, url, stream = None, {}, None, None, False
    items = iter(arguments)
    for argument in items:
        if argument == "-s":
            continue
        if argument == "-N":
            stream = True
        elif argument == "-X":
            method = next(items)
        elif argument == "-H":
            name, _, value = next(items).partition(":")
            headers[name.strip()] = value.strip()
        elif argument == "-d":
            body = next(items)
        else:
            assert not argument.startswith("-"), f"a curl option the test does not know: {argument}"
            assert url is None, f"a second URL: {argument}"
            url = argument
    assert url is not None
    assert url.startswith("localhost:8000/")
    request = client.build_request(method or ("POST" if body else "GET"), url.removeprefix("localhost:8000"),
                                   headers=headers, content=body)
    response = client.send(request, stream=stream)
    if stream:
        response.close()  # a live stream does not end: its status and headers are the answer
    return response


def failures(sent: list[Sent]) -> list[str]:
    """What went wrong: an answer other than the status its comment names (else any 2xx), or a reply
    without a member its comment shows."""
    wrong = []
    for one in sent:
        response = one.response
        comment = [*COMMENT.split(one.command, maxsplit=1), ""][1].strip()
        status = STATUS.match(comment)
        shown = "" if response.is_closed and not response.is_stream_consumed else response.text[:300]
        if (response.status_code != int(status.group(1))) if status else not response.is_success:
            wrong.append(f"{one.command}\n  -> {response.status_code} {shown}")
        elif comment.startswith(("{", "...")):
            missing = [name for name in SHOWN.findall(comment) if name not in response.json()]
            if missing:
                wrong.append(f"{one.command}\n  -> without {missing}: {shown}")
    return wrong


# ---------------------------------------------------------------- the documented setup of a section

def _player(client: httpx.Client, name: str) -> tuple[str, str]:
    made = client.post("/players", json={"name": name})
    assert made.status_code == 201, made.text
    return made.json()["id"], made.json()["token"]


def _second_player(client: httpx.Client, variables: dict[str, str]) -> None:
    """``BOB`` and ``BOBS_TOKEN``: a second player, made as in step 1 of the walk-through; ``PLAYER``,
    the first one's id (step 1's ``"id"``)."""
    variables["PLAYER"] = client.get("/players/me", headers={"Authorization": variables["AUTH"].partition(": ")[2]}
                                     ).json()["id"]
    variables["BOB"], variables["BOBS_TOKEN"] = _player(client, "Bob")


def _two_games(client: httpx.Client, variables: dict[str, str]) -> None:
    """``GAME1`` and ``GAME2``: the walk-through's game and another of the first player's."""
    another = client.post("/games", json={"deal": {"source": "seed", "seed": 7}},
                          headers={"Authorization": variables["AUTH"].partition(": ")[2], "Api-Version": NEWEST.name})
    assert another.status_code == 201, another.text
    variables["GAME1"], variables["GAME2"] = variables["GAME"], another.json()["id"]


SETUP: dict[tuple[str, str], Callable[[httpx.Client, dict[str, str]], None]] = {
    ("docs/api.md", "## Deals: seeds, decks, the verified pools and the daily deal"): _second_player,
    ("docs/api.md", "## Watching many games"): _two_games,
}


def _running_tournament(client: httpx.Client) -> Callable[[str, dict[str, str]], None]:
    """Before a tournament's next game is asked for: wait until its deals are proven and it runs, as
    the example's comment says to (the solver proves them after the creation has answered)."""
    def before(command: str, variables: dict[str, str]) -> None:
        if "/games" not in command or "TOURNAMENT" not in variables:
            return
        deadline = time.monotonic() + 120
        while client.get(f"/tournaments/{variables['TOURNAMENT']}").json()["status"] != "running":
            assert time.monotonic() < deadline, "the tournament's deals were not proven in 120 s"
            time.sleep(0.2)
    return before


@pytest.mark.parametrize("document", ["README.md", "docs/api.md"])
def test_every_shell_example_runs(client: httpx.Client, document: str) -> None:
    variables: dict[str, str] = {}
    sent: list[Sent] = []
    not_run = {}
    for block in blocks(ROOT / document):
        if block.not_run is not None:
            not_run[(document, block.section)] = block.not_run
            continue
        setup = SETUP.pop((document, block.section), None)
        if setup is not None:
            setup(client, variables)
        sent += run_commands(block.lines, client, variables, _running_tournament(client))
    assert not [key for key in SETUP if key[0] == document], "a setup of a section with no shell block"
    assert set(not_run) == {key for key in NOT_RUN if key[0] == document}, "every block not run is listed in NOT_RUN"
    assert sent
    wrong = failures(sent)
    assert not wrong, "\n".join(wrong)
    assert {s.response.headers["api-version"] for s in sent} == {NEWEST.name}, "every example is of the newest version"


@pytest.mark.parametrize("document", ["README.md", "docs/api.md"])
def test_the_curl_walk_through_plays(client: httpx.Client, document: str) -> None:
    commands = walk_through(ROOT / document)
    replies = run(commands, client)
    assert len(replies) == sum(1 for c in commands if c.startswith("curl"))
    failed = [f"{r.request.method} {r.request.url.path}: {r.status_code} {r.text[:200]}" for r in replies
              if not r.is_success]
    assert not failed, "\n".join(failed)
    moves = [r for r in replies if r.request.method == "POST" and r.request.url.path.endswith("/moves")]
    assert moves
    assert all(r.json()["events"] for r in moves), "every move of the walk-through appends events"
    assert {r.headers["api-version"] for r in replies} == {NEWEST.name}, "the walk-through is of the newest version"
    pages = [r.json() for r in replies if r.request.url.path.endswith("/events") and "cursor" in str(r.request.url)]
    assert pages
    assert all("items" in page for page in pages)


def test_an_illegal_example_is_caught(client: httpx.Client) -> None:
    commands = walk_through(ROOT / "README.md")
    broken = [c.replace('"card": "2C"', '"card": "KS"') for c in commands]
    assert broken != commands, "the walk-through's card move is the one this test breaks"
    assert any(r.status_code == 422 for r in run(broken, client))
