"""Service secrets, and the proof behind a race's secret deal.

``service_secrets`` holds secrets the server made itself, by name: ``deal-secret`` keys the HMAC
that derives daily and race deals when ``DAILY_SECRET`` is not configured. The first process
to need it inserts a random one (``ON CONFLICT DO NOTHING``) and every process reads back the
row that won, so all processes on a database agree, also after restarts.

``races.deal_proof`` is the solver's proof of a race dealt from the secret (candidate number,
winning line, positions searched); never shown. NULL for a race whose deal was named.


Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "service_secrets",
        sa.Column("name", sa.Text(), primary_key=True),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    )
    op.add_column("races", sa.Column("deal_proof", postgresql.JSONB(), nullable=True))


def downgrade() -> None:
    op.drop_column("races", "deal_proof")
    op.drop_table("service_secrets")
