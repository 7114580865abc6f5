"""Pile names as the API spells them."""

from __future__ import annotations

from .errors import InvalidRequest

STOCK = "stock"
WASTE = "waste"
RESERVE = "reserve"
FOUNDATION = "foundation"
TABLEAU = ("tableau-1", "tableau-2", "tableau-3", "tableau-4")
COLUMN_OF: dict[str, int] = {name: index for index, name in enumerate(TABLEAU)}
TARGETS = (FOUNDATION, *TABLEAU)


def parse_target(text: object) -> str:
    if isinstance(text, str) and (text == FOUNDATION or text in COLUMN_OF):
        return text
    shown = repr(text) if not isinstance(text, str) or len(text) <= 20 else repr(text[:20] + "...")
    raise InvalidRequest(f"'to' must be 'foundation' or 'tableau-1' .. 'tableau-4', not {shown}")
