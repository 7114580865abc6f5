"""The version-change mechanism (service/http/version_changes.py) on a small ASGI app of its own:
a request of an older version is upgraded, its reply and stream messages downgraded, its ETags
carry the version, and a request of the newest version or of an untouched operation passes as
it is. (The API's own versions and their golden replies are tested over HTTP in tests/api.)"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import httpx

from service.http.request_ids import RequestIds
from service.http.version_changes import Translation, VersionChange
from service.http.versions import Version, Versions


class RenameState(VersionChange):
    """The newer version calls ``state`` ``status``, pages with ``cursor`` and takes ``{"kind": ...}``."""

    description = "state is status"
    operations = ("GET /things/{thing_id}", "POST /things", "GET /things/{thing_id}/stream")

    def upgrade_request(
        self, operation: str, query: dict[str, list[str]], body: Any, headers: Sequence[tuple[bytes, bytes]]
    ) -> Any:
        if "before" in query:
            query["cursor"] = query.pop("before")
        if isinstance(body, dict) and "type" in body:
            body = dict(body)
            body["kind"] = body.pop("type")
        return body

    def downgrade_reply(self, operation: str, status: int, body: Any) -> Any:
        if isinstance(body, dict) and "status" in body:
            body["state"] = body.pop("status")
        return body

    def downgrade_message(self, operation: str, event: str, data: Any) -> Any:
        return self.downgrade_reply(operation, 200, data)


OLD, NEW = "2026-01-01", "2026-02-01"
VERSIONS = Versions([Version(OLD, ("first",)), Version(NEW, ("second",), introduced=(RenameState(),))])


async def things(scope: Any, receive: Any, send: Any) -> None:
    """The newest shapes: a thing (ETag "3"), an echo of a posted body, and a stream of two views."""
    headers = dict(scope["headers"])
    body = b""
    if scope["method"] == "POST":
        message = await receive()
        body = message.get("body", b"")
    path = scope["path"]
    if path.endswith("/stream"):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        for n in (1, 2):
            chunk = b'event: view\nid: %d\ndata: {"status": "s%d", "n": %d}\n\n' % (n, n, n)
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b": keep-alive\n\n", "more_body": False})
        return
    reply = {
        "status": "cancelled",
        "query": scope["query_string"].decode(),
        "ifMatch": headers.get(b"if-match", b"").decode(),
        "posted": _posted(body),
    }
    encoded = json.dumps(reply).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [
        (b"content-type", b"application/json"), (b"content-length", b"%d" % len(encoded)), (b"etag", b'"3"'),
    ]})
    await send({"type": "http.response.body", "body": encoded})


def _posted(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return body.decode()  # as it came: the app's own parser refuses it


def call(method: str, path: str, version: str | None = None, **kwargs: Any) -> httpx.Response:
    headers = {**kwargs.pop("headers", {}), **({"Api-Version": version} if version else {})}

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=RequestIds(things, versions=VERSIONS))
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.request(method, path, headers=headers, **kwargs)

    return asyncio.run(go())


def test_the_newest_version_passes_as_the_code_has_it() -> None:
    reply = call("GET", "/things/7?before=x", NEW)
    assert reply.headers["api-version"] == NEW
    assert reply.json()["status"] == "cancelled"
    assert reply.json()["query"] == "before=x"
    assert reply.headers["etag"] == f'"3;{NEW}"'  # a later version's tags carry its name


def test_an_older_version_is_upgraded_and_downgraded() -> None:
    reply = call("GET", "/things/7?before=x&limit=5")  # no header: the oldest
    assert reply.headers["api-version"] == OLD
    body = reply.json()
    assert body["state"] == "cancelled"
    assert "status" not in body
    assert body["query"] == "limit=5&cursor=x"
    assert reply.headers["etag"] == '"3"'  # the first version's tags are the code's
    assert int(reply.headers["content-length"]) == len(reply.content)


def test_a_posted_body_is_upgraded() -> None:
    reply = call("POST", "/things", OLD, json={"type": "seed", "seed": 7})
    assert reply.json()["posted"] == {"seed": 7, "kind": "seed"}
    unreadable = call("POST", "/things", OLD, content=b"[1, 2", headers={"content-type": "application/json"})
    assert unreadable.json()["posted"] == "[1, 2"  # not JSON: handed on untouched, for the app to refuse


def test_stream_messages_are_downgraded_one_by_one() -> None:
    reply = call("GET", "/things/7/stream", OLD)
    datas = [json.loads(line[6:]) for line in reply.text.splitlines() if line.startswith("data: ")]
    assert datas == [{"state": "s1", "n": 1}, {"state": "s2", "n": 2}]
    assert ": keep-alive" in reply.text


def test_an_untouched_operation_passes_as_it_is() -> None:
    reply = call("GET", "/other", OLD)
    assert reply.json()["status"] == "cancelled"


def test_if_match_loses_its_version_and_another_versions_tag_never_matches() -> None:
    assert call("GET", "/things/7", NEW, headers={"If-Match": f'"3;{NEW}"'}).json()["ifMatch"] == '"3"'
    assert call("GET", "/things/7", NEW, headers={"If-Match": '"3"'}).json()["ifMatch"] == '"0"'
    assert call("GET", "/things/7", OLD, headers={"If-Match": '"3"'}).json()["ifMatch"] == '"3"'
    assert call("GET", "/things/7", OLD, headers={"If-Match": f'"3;{NEW}"'}).json()["ifMatch"] == '"0"'
    assert call("GET", "/things/7", NEW, headers={"If-Match": "*"}).json()["ifMatch"] == "*"


def test_only_versions_with_something_to_change_are_translated() -> None:
    alone = Versions([Version(OLD, ("first",))])
    assert alone.translation(alone.oldest) is None  # one version: nothing in the way of a request
    assert isinstance(VERSIONS.translation(VERSIONS.oldest), Translation)
    assert VERSIONS.translation(VERSIONS.newest) is not None  # its ETags carry its name
