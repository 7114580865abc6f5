"""Tournaments, duplicate play: every entrant plays the same secret deals in the same order
(service/tournaments).

- ``tournaments``: the ruleset, how many deals, when it starts and how long it lasts (``ends_at``
  = ``starts_at`` + ``minutes``), whether it is rated, when its deals were proven (``prepared_at``;
  null while ``preparing``), when it finished, and a ``version`` that grows with every change
  (its stream's ids and notifications).
- ``tournament_deals``: deal ``number`` 1..n of a tournament, its deck (never shown while the
  tournament runs), the deck's canonical fingerprint (the live-deck index: the solver refuses
  its copies until the tournament has finished; ``tournament_deals_fingerprint``) and the
  solver's proof (never shown).
- ``tournament_entrants``: who entered and when; at the finish each entrant's frozen standing
  (replay-verified) and place (null: unplaced).
- ``tournament_games``: the game each entrant was dealt for each deal number (one at most).

Why the previous release keeps working: it reads none of these tables.

Revision ID: 0023
Revises: 0022
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

UUID = postgresql.UUID(as_uuid=True)


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", UUID, primary_key=True),
        sa.Column("creator_id", UUID, sa.ForeignKey("players.id"), nullable=False),
        sa.Column("ruleset_id", sa.Text(), nullable=False),
        sa.Column("ruleset_version", sa.Integer(), nullable=False),
        sa.Column("deal_count", sa.Integer(), nullable=False),
        sa.Column("starts_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("minutes", sa.Integer(), nullable=False),
        sa.Column("ends_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("prepared_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("deal_count BETWEEN 2 AND 12", name="tournaments_deal_count_check"),
        sa.CheckConstraint("minutes BETWEEN 1 AND 1440", name="tournaments_minutes_check"),
    )
    op.create_index("tournaments_unfinished", "tournaments", ["ends_at"],
                    postgresql_where=sa.text("finished_at IS NULL"))
    op.create_table(
        "tournament_deals",
        sa.Column("tournament_id", UUID, sa.ForeignKey("tournaments.id"), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("deck", postgresql.JSONB(), nullable=False),
        sa.Column("fingerprint", sa.Text(), nullable=False),
        sa.Column("proof", postgresql.JSONB(), nullable=False),
        sa.PrimaryKeyConstraint("tournament_id", "number", name="tournament_deals_pkey"),
    )
    op.create_index("tournament_deals_fingerprint", "tournament_deals", ["fingerprint"])
    op.create_table(
        "tournament_entrants",
        sa.Column("tournament_id", UUID, sa.ForeignKey("tournaments.id"), nullable=False),
        sa.Column("player_id", UUID, sa.ForeignKey("players.id"), nullable=False),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("standing", postgresql.JSONB(), nullable=True),
        sa.Column("place", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("tournament_id", "player_id", name="tournament_entrants_pkey"),
    )
    op.create_table(
        "tournament_games",
        sa.Column("tournament_id", UUID, sa.ForeignKey("tournaments.id"), nullable=False),
        sa.Column("player_id", UUID, sa.ForeignKey("players.id"), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("game_id", UUID, sa.ForeignKey("games.id"), nullable=False),
        sa.PrimaryKeyConstraint("tournament_id", "player_id", "number", name="tournament_games_pkey"),
        sa.UniqueConstraint("game_id", name="tournament_games_game_id_key"),
    )


def downgrade() -> None:
    op.drop_table("tournament_games")
    op.drop_table("tournament_entrants")
    op.drop_index("tournament_deals_fingerprint", table_name="tournament_deals")
    op.drop_table("tournament_deals")
    op.drop_index("tournaments_unfinished", table_name="tournaments")
    op.drop_table("tournaments")
