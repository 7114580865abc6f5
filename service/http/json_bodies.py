"""What a JSON request body may not carry, whatever its operation: a name twice in one object,
runaway nesting, malformed JSON (each a 400 in the service's words). The app checks every body
(``service.http.app``), the move route its own, and the version changes check a body before they
rewrite it for a newer version, since rewriting would drop a repeated name unseen."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from ..errors import BadRequest
from .wording import echo, json_problem

MAX_NESTING = 32
"""Request bodies are at most three levels deep; anything past this is refused as nested too deeply."""


class _DuplicateKey(Exception):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _DuplicateKey(key)
        found[key] = value
    return found


def check_json_body(raw: bytes) -> Any:
    """Refuse what a JSON parser would let through but a request must not carry.

    * a name twice in one object (``{"type": "draw", "type": "resign"}``): parsers disagree on which
      one wins (msgspec takes the last), so a proxy or log could read another request than this
      service; RFC 7493 (I-JSON) forbids it;
    * nesting deep enough to exhaust the parser's recursion (a 400, not a 500).

    Malformed JSON gets a 400 that says where it breaks, in our words. Cheap on the hot path:
    only a body with more ``:`` than object members is parsed a second time to look for the name.
    Returns the decoded body (service.http.move_route uses it; Litestar decodes its own).
    """
    if not raw.strip():
        raise BadRequest("the request needs a JSON body")
    try:
        data = msgspec.json.decode(raw)
    except RecursionError:
        raise BadRequest("the JSON body is nested too deeply") from None
    except (msgspec.DecodeError, msgspec.ValidationError) as error:  # ValidationError: a number too large
        raise BadRequest(json_problem(str(error))) from None
    members = 0
    pending: list[tuple[dict[str, Any] | list[Any], int]] = [(data, 1)] if isinstance(data, dict | list) else []
    while pending:
        item, depth = pending.pop()
        if depth > MAX_NESTING:  # msgspec's own recursion limit differs between Python versions
            raise BadRequest("the JSON body is nested too deeply")
        if isinstance(item, dict):
            members += len(item)
            values: Any = item.values()
        else:
            values = item
        pending.extend((value, depth + 1) for value in values if isinstance(value, dict | list))
    if raw.count(b":") <= members:
        return data  # every ':' separates a member: no name can repeat
    try:
        json.loads(raw, object_pairs_hook=_unique_keys)
    except _DuplicateKey as duplicate:
        raise BadRequest(f"the JSON body names {echo(str(duplicate.args[0]))} twice in one object") from None
    except RecursionError:
        raise BadRequest("the JSON body is nested too deeply") from None
    except ValueError:
        pass
    return data
