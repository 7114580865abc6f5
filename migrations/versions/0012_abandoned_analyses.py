"""The analyses of abandoned games queued again: an abandonment is a position of its own.

An abandoned game's ``GameAbandoned`` (the service's end of a game nobody moved for
ABANDON_AFTER_DAYS) is the last position of its analysis (``domain.analysis.STARTS_A_MOVE``), as
a resignation is. An analysis made without it took the abandonment for part of the player's last
move: that move's position got the game's end and the verdict ``lost`` without proof, and the
turning point could fall on the move instead of on the abandonment. A job's result is kept once
it is ``done`` and never made again, so every job of a game with a ``GameAbandoned`` is queued
again here: no answers kept, its total counted again (one position more: the abandonment), its
attempt left as it is (a worker still running it finds the job no longer ``running`` under its attempt and
stops). The downgrade changes nothing: a job queued again is simply analysed again.

Revision ID: 0012
Revises: 0011
"""

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

MOVE_EVENTS = (
    "StockDrawn", "WasteRecycled", "GameStalled", "CardsMoved", "MoveUndone", "GameResigned", "GameAbandoned",
)
"""The events that start a move, the abandonment included: a job's total is one position more (the deal)."""

_QUEUE_AGAIN = f"""
UPDATE analysis_jobs j
SET status = 'queued', answers = '[]', done = 0, result = NULL, error = NULL, lease_until = NULL, finished_at = NULL,
    total = 1 + (SELECT count(*) FROM events e WHERE e.game_id = j.game_id AND e.type IN {MOVE_EVENTS!r})
WHERE EXISTS (SELECT 1 FROM events e WHERE e.game_id = j.game_id AND e.type = 'GameAbandoned')
"""


def upgrade() -> None:
    op.execute(_QUEUE_AGAIN)


def downgrade() -> None:
    pass
