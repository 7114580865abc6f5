"""Rated tournaments share the rated races' order and history (service/tournaments, service/ratings).

A rated tournament is rated as it finishes, in the same recorded order as rated races
(``rated_races.sequence``, under the same lock per ruleset), so the rebuild replays races and
tournaments in the one order in which their updates were applied.

- ``rated_races.tournament``: true when the row's ``race_id`` names a tournament (false for every
  existing row).
- The foreign keys ``rated_races.race_id`` -> ``races.id`` and ``rating_changes.race_id`` ->
  ``races.id`` are dropped: ``race_id`` names the rated contest, a race or a tournament.

Why the previous release keeps working: it writes only race rows, which keep satisfying
everything; the new column has a default it never needs to write. Its rating rebuild joins
``rated_races`` to ``races`` and so leaves tournament rows out: during a rollout, run the rebuild
from the new release only (docs/ratings.md).
The downgrade deletes the tournament rows and their changes, then restores both keys.

Revision ID: 0024
Revises: 0023
"""

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("rated_races", sa.Column("tournament", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.drop_constraint("rating_changes_race_id_fkey", "rating_changes", type_="foreignkey")
    op.drop_constraint("rated_races_race_id_fkey", "rated_races", type_="foreignkey")


def downgrade() -> None:
    op.execute("DELETE FROM rating_changes WHERE race_id IN (SELECT race_id FROM rated_races WHERE tournament)")
    op.execute("DELETE FROM rated_races WHERE tournament")
    op.create_foreign_key("rated_races_race_id_fkey", "rated_races", "races", ["race_id"], ["id"])
    op.create_foreign_key("rating_changes_race_id_fkey", "rating_changes", "races", ["race_id"], ["id"])
    op.drop_column("rated_races", "tournament")
