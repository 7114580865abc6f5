"""The curl walk-throughs of README.md and docs/api.md, run against a live server.

Each ``sh`` block under a "Play a game with curl" heading is read as a reader would type it:
continuation lines joined, ``NAME=...  # the "field" from the reply`` filled in from the previous
reply's JSON member, other assignments expanded, and every ``curl`` sent to the test server (its
``-X``, ``-H`` and ``-d``). Every request must succeed (2xx), so an example can never be illegal
on its own deal again. curl itself is not needed: the options the examples use are read here.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import httpx
import pytest

from service.http.versions import NEWEST

ROOT = Path(__file__).resolve().parents[2]
FROM_REPLY = re.compile(r'^(\w+)=\.\.\.\s+# the "(\w+)" from the reply')
ASSIGNMENT = re.compile(r"^(\w+)=(.*)$")


def walk_through(document: Path) -> list[str]:
    """The commands of the document's curl walk-through, one per line."""
    text = document.read_text()
    found = re.search(r"## Play a game with curl\n+```sh\n(.*?)```", text, re.S)
    assert found, f"{document.name} has no curl walk-through"
    return [line.strip() for line in found.group(1).replace("\\\n", " ").splitlines() if line.strip()]


def run(commands: list[str], client: httpx.Client) -> list[httpx.Response]:
    variables: dict[str, str] = {}
    replies: list[httpx.Response] = []
    for command in commands:
        if command.startswith("#"):
            continue
        from_reply = FROM_REPLY.match(command)
        if from_reply:
            variables[from_reply.group(1)] = replies[-1].json()[from_reply.group(2)]
            continue
        words = [re.sub(r"\$(\w+)", lambda m: variables[m.group(1)], w) for w in shlex.split(command, comments=True)]
        assignment = ASSIGNMENT.match(words[0])
        if assignment:
            variables[assignment.group(1)] = assignment.group(2)
            continue
        assert words[0] == "curl", f"not a command the walk-through may hold: {command}"
        replies.append(_curl(words[1:], client))
    return replies


def _curl(arguments: list[str], client: httpx.Client) -> httpx.Response:
    method, headers, body, url = None, {}, None, None
    items = iter(arguments)
    for argument in items:
        if argument in ("-s", "-N"):
            continue
        if argument == "-X":
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
    return client.request(method or ("POST" if body else "GET"), url.removeprefix("localhost:8000"),
                          headers=headers, content=body)


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
