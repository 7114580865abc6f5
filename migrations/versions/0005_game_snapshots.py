"""Snapshots in a table of their own, written every few moves instead of every move.

A move used to rewrite its game's whole snapshot (about 1.1 KB of JSON, most of it the undo
window and the deck) inside the ``games`` row; PostgreSQL logs the whole new row version, so each
move cost about 1.7 KB of WAL. Now ``game_snapshots`` holds one snapshot per game, at its own
``version``, written by the move that crosses a multiple of ``SNAPSHOT_EVERY`` versions (and by
undos, the ending move and moves with an Idempotency-Key: service/store/event_store.py); a game's
state is that snapshot with the events after it folded in (``domain.codec.restore``). ``games``
keeps what lists and filters need as columns (status, version, move and undo counts, assisted).

Every existing game's snapshot is current, so it moves over as is.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "game_snapshots",
        sa.Column("game_id", postgresql.UUID(as_uuid=True), sa.ForeignKey("games.id"), primary_key=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("snapshot", postgresql.JSON(), nullable=False),  # read and written whole, never queried into
    )
    op.add_column("games", sa.Column("move_count", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("games", sa.Column("undo_count", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("games", sa.Column("assisted", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.execute("INSERT INTO game_snapshots (game_id, version, snapshot) SELECT id, version, snapshot FROM games")
    op.execute(
        "UPDATE games SET move_count = (snapshot->>'moveCount')::int, undo_count = (snapshot->>'undoCount')::int,"
        " assisted = (snapshot->>'assisted')::boolean"
    )
    op.drop_column("games", "snapshot")


def downgrade() -> None:
    # The old layout needs every game's snapshot at its current version; a snapshot that is behind
    # needs the rules to bring it forward (domain.codec.restore), which a migration cannot run.
    # The lock (held to the end of the migration's transaction) waits for moves being written and
    # keeps new ones out, so no move can slip in between this check and the copy below.
    op.execute("LOCK TABLE games, game_snapshots IN EXCLUSIVE MODE")
    behind = op.get_bind().execute(sa.text(
        "SELECT count(*) FROM games g JOIN game_snapshots s ON s.game_id = g.id WHERE s.version <> g.version"
    )).scalar_one()
    if behind:
        raise RuntimeError(
            f"{behind} game(s) have a snapshot older than their last event; downgrading would lose their state"
        )
    op.add_column("games", sa.Column("snapshot", postgresql.JSON(), nullable=True))
    op.execute("UPDATE games g SET snapshot = s.snapshot FROM game_snapshots s WHERE s.game_id = g.id")
    op.alter_column("games", "snapshot", nullable=False)
    op.drop_column("games", "assisted")
    op.drop_column("games", "undo_count")
    op.drop_column("games", "move_count")
    op.drop_table("game_snapshots")
