"""Bot accounts and ratings from rated races (service/ratings).

- ``players.bot``: the account is a bot (``POST /players {"bot": true}``); false for every
  existing player.
- ``races.rated``: the race changes its entrants' ratings when it finishes; false for every
  existing race.
- ``rated_races``: the recorded order in which rated races finished (``sequence``, given under
  the ratings' lock of the ruleset in the transaction that finished the race). Not a projection:
  the rebuild replays the races in this order.
- ``player_ratings`` (a projection): a player's Weng-Lin Plackett-Luce rating in a ruleset
  (``mu``, ``sigma``), its displayed figures (``rating``, ``deviation``) and rated races; the
  index ``player_ratings_list`` (ruleset, rating desc, player desc) pages the rating list by keyset.
- ``rating_changes`` (a projection): each entrant's rating before and after each rated race; a
  player's history in a ruleset is read by ``rating_changes_history``.

Why the previous release keeps working: every new column has a default it never needs to write
(its registrations make humans, its races are unrated), and it reads none of the new tables.
The downgrade drops the tables and the columns.

Revision ID: 0019
Revises: 0016
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0019"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("players", sa.Column("bot", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.add_column("races", sa.Column("rated", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_table(
        "rated_races",
        sa.Column("sequence", sa.BigInteger(), sa.Identity(always=False), primary_key=True),
        sa.Column("race_id", postgresql.UUID(as_uuid=True), sa.ForeignKey("races.id"), nullable=False),
        sa.Column("ruleset_id", sa.Text(), nullable=False),
        sa.Column("rated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("race_id", name="rated_races_race_id_key"),
    )
    op.create_table(
        "player_ratings",
        sa.Column("player_id", postgresql.UUID(as_uuid=True), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("ruleset_id", sa.Text(), nullable=False),
        sa.Column("mu", postgresql.DOUBLE_PRECISION(), nullable=False),
        sa.Column("sigma", postgresql.DOUBLE_PRECISION(), nullable=False),
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.Column("deviation", sa.Integer(), nullable=False),
        sa.Column("races", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("player_id", "ruleset_id", name="player_ratings_pkey"),
    )
    op.create_index("player_ratings_list", "player_ratings",
                    ["ruleset_id", sa.text("rating DESC"), sa.text("player_id DESC")])
    op.create_table(
        "rating_changes",
        sa.Column("race_id", postgresql.UUID(as_uuid=True), sa.ForeignKey("races.id"), nullable=False),
        sa.Column("player_id", postgresql.UUID(as_uuid=True), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("ruleset_id", sa.Text(), nullable=False),
        sa.Column("sequence", sa.BigInteger(), sa.ForeignKey("rated_races.sequence"), nullable=False),
        sa.Column("place", sa.Integer(), nullable=False),
        sa.Column("entrants", sa.Integer(), nullable=False),
        sa.Column("mu_before", postgresql.DOUBLE_PRECISION(), nullable=False),
        sa.Column("sigma_before", postgresql.DOUBLE_PRECISION(), nullable=False),
        sa.Column("mu_after", postgresql.DOUBLE_PRECISION(), nullable=False),
        sa.Column("sigma_after", postgresql.DOUBLE_PRECISION(), nullable=False),
        sa.Column("rated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("race_id", "player_id", name="rating_changes_pkey"),
    )
    op.create_index("rating_changes_history", "rating_changes", ["player_id", "ruleset_id", "sequence"])


def downgrade() -> None:
    op.drop_index("rating_changes_history", table_name="rating_changes")
    op.drop_table("rating_changes")
    op.drop_index("player_ratings_list", table_name="player_ratings")
    op.drop_table("player_ratings")
    op.drop_table("rated_races")
    op.drop_column("races", "rated")
    op.drop_column("players", "bot")
