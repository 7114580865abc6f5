"""Idempotency keys of the creating POSTs, and an index to expire both kinds of key.

``request_keys`` holds one row per (scope, key): the scope is the bearer token's player
(``player:<id>``) or, for ``POST /players``, the client address (``address:<ip>``); the key as a
SHA-256 (never the key); the hash of the request (method, path, body); and, once the request has
succeeded, its reply (status, the headers that matter, the body sealed under the key: a reply may
hold a token). A row without a status is pending: its request is being
served, or was cut off after it may have created something (service.http.idempotency).

Both this table and the moves' ``idempotency_keys`` get an index on ``created_at``: the periodic
job that removes keys older than IDEMPOTENCY_KEY_HOURS deletes by it, in small batches.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "request_keys",
        sa.Column("scope", sa.Text(), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("request_hash", sa.LargeBinary(), nullable=False),
        sa.Column("status", sa.Integer(), nullable=True),
        sa.Column("headers", postgresql.JSON(), nullable=True),
        sa.Column("body", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("scope", "key", name="request_keys_pkey"),
    )
    op.create_index("request_keys_created_at", "request_keys", ["created_at"])
    op.create_index("idempotency_keys_created_at", "idempotency_keys", ["created_at"])


def downgrade() -> None:
    op.drop_index("idempotency_keys_created_at", table_name="idempotency_keys")
    op.drop_index("request_keys_created_at", table_name="request_keys")
    op.drop_table("request_keys")
