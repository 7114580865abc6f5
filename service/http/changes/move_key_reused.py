"""2026-12-05: an Idempotency-Key sent again with another move is ``idempotency_key_reused``, as
on every creating POST (2026-12-04: ``invalid_request``)."""

from __future__ import annotations

from typing import Any

from ..version_changes import VersionChange
from . import JSON, MOVE, operation_of

_KEY = (
    "1-255 visible ASCII characters; a retry with the same key returns the first result, the same key with another "
    "move is a 400 invalid_request (the creating POSTs say idempotency_key_reused). Keys are kept "
    "IDEMPOTENCY_KEY_HOURS (at least 24 hours); after that a key is new again"
)


class MoveKeyReused(VersionChange):
    description = (
        "An Idempotency-Key sent again with another move is a 400 idempotency_key_reused (was "
        "invalid_request), as on the creating POSTs."
    )
    operations = (MOVE,)

    def downgrade_reply(self, operation: str, status: int, body: Any) -> Any:
        if status == 400 and isinstance(body, dict) and body.get("code") == "idempotency_key_reused":
            return {**body, "code": "invalid_request"}
        return body

    def downgrade_schema(self, document: JSON) -> None:
        operation = operation_of(document, MOVE)
        for parameter in operation["parameters"]:
            if parameter.get("name") == "Idempotency-Key":
                parameter["description"] = parameter["schema"]["description"] = _KEY
        operation["responses"]["400"]["description"] = (
            "Invalid request (problem+json, code invalid_request); unsupported_version: an Api-Version that is not "
            "served"
        )
