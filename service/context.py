"""What the request being answered is, for logs and problems: set by the HTTP layer
(service.http.request_ids) and by the token check, read anywhere in the request's task."""

from __future__ import annotations

import uuid
from contextvars import ContextVar

REQUEST_ID: ContextVar[str | None] = ContextVar("canfield_request_id", default=None)
"""The id of the request being answered."""
PLAYER: ContextVar[uuid.UUID | None] = ContextVar("canfield_player", default=None)
"""The player whose token the request carried, once it was checked (for the access log, which
writes it as text: kept as the id itself, since making the text costs a move a microsecond)."""
