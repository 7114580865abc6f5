"""Players per ruleset, counted as they come: ``ruleset_stats``, so ``GET /stats`` reads a row per
ruleset instead of counting every player's row of ``player_stats``.

A player counts under a ruleset from their first finished game under it, which is the moment
their ``player_stats`` row is inserted. Two statement-level triggers on ``player_stats`` keep the
count in the same transaction as that row: inserted rows add to it, deleted rows take from it
(no code deletes any). Being triggers, they count what every writer does: the processes of the
version before this one (which know nothing of the table) while they still serve, the service's
game-ending moves, and ``canfield projections rebuild`` (which empties both tables, then COPYs
``player_stats``: its triggers fire once for the whole COPY).

The backfill counts ``player_stats`` once, in the migration's transaction, after taking the lock
the triggers need (SHARE ROW EXCLUSIVE): rows written meanwhile wait for it and are then counted
by the triggers, never twice and never missed. Reads are not blocked; game-ending moves wait for
the count (an index-only count: well under a second per million rows).

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_COUNT_ADDED = """
CREATE FUNCTION ruleset_stats_players_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO ruleset_stats AS r (ruleset_id, players)
    SELECT ruleset_id, count(*) FROM added_player_stats GROUP BY ruleset_id
    ON CONFLICT (ruleset_id) DO UPDATE SET players = r.players + EXCLUDED.players;
    RETURN NULL;
END
$$
"""

_COUNT_REMOVED = """
CREATE FUNCTION ruleset_stats_players_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE ruleset_stats r SET players = r.players - d.players
    FROM (SELECT ruleset_id, count(*) AS players FROM removed_player_stats GROUP BY ruleset_id) d
    WHERE r.ruleset_id = d.ruleset_id;
    RETURN NULL;
END
$$
"""


def upgrade() -> None:
    op.create_table(
        "ruleset_stats",
        sa.Column("ruleset_id", sa.Text(), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("ruleset_id", name="ruleset_stats_pkey"),
    )
    op.execute(_COUNT_ADDED)
    op.execute(_COUNT_REMOVED)
    op.execute("LOCK TABLE player_stats IN SHARE ROW EXCLUSIVE MODE")
    op.execute(
        "CREATE TRIGGER player_stats_added AFTER INSERT ON player_stats REFERENCING NEW TABLE AS added_player_stats"
        " FOR EACH STATEMENT EXECUTE FUNCTION ruleset_stats_players_added()"
    )
    op.execute(
        "CREATE TRIGGER player_stats_removed AFTER DELETE ON player_stats"
        " REFERENCING OLD TABLE AS removed_player_stats"
        " FOR EACH STATEMENT EXECUTE FUNCTION ruleset_stats_players_removed()"
    )
    op.execute("INSERT INTO ruleset_stats (ruleset_id, players) SELECT ruleset_id, count(*) FROM player_stats"
               " GROUP BY ruleset_id")


def downgrade() -> None:
    op.execute("DROP TRIGGER player_stats_removed ON player_stats")
    op.execute("DROP TRIGGER player_stats_added ON player_stats")
    op.execute("DROP FUNCTION ruleset_stats_players_removed()")
    op.execute("DROP FUNCTION ruleset_stats_players_added()")
    op.drop_table("ruleset_stats")
