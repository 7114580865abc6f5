"""Personal access tokens: several per player, named, scoped, expiring and revocable.

``tokens`` holds each token's hash (never the token), its owner, a name the player chose, its
scopes (``play``, ``read-private``, ``account``), when it was made, when it expires (or never)
and when it was revoked (or not). A token answers while it is neither revoked nor expired.
Every player's one token of before moves over as "first token" with every scope, and
``players.token_hash`` goes: a token now belongs to the tokens table alone.

The downgrade gives each player back the hash of their oldest live token (a player with none is
given a hash no token has, so nothing can act for them).

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tokens",
        sa.Column("id", postgresql.UUID(as_uuid=True), primary_key=True),
        sa.Column("player_id", postgresql.UUID(as_uuid=True), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("token_hash", sa.LargeBinary(), nullable=False, unique=True),
        sa.Column("scopes", postgresql.ARRAY(sa.Text()), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("tokens_player_id", "tokens", ["player_id"])
    op.execute(
        "INSERT INTO tokens (id, player_id, name, token_hash, scopes, created_at) "
        "SELECT gen_random_uuid(), id, 'first token', token_hash, ARRAY['play', 'read-private', 'account'], created_at "
        "FROM players"
    )
    op.drop_column("players", "token_hash")


def downgrade() -> None:
    op.add_column("players", sa.Column("token_hash", sa.LargeBinary(), nullable=True))
    op.execute(
        "UPDATE players p SET token_hash = coalesce("
        "(SELECT t.token_hash FROM tokens t WHERE t.player_id = p.id AND t.revoked_at IS NULL "
        " AND (t.expires_at IS NULL OR t.expires_at > now()) ORDER BY t.created_at, t.id LIMIT 1), "
        "sha256(convert_to('revoked:' || p.id::text, 'UTF8')))"
    )
    op.alter_column("players", "token_hash", nullable=False)
    op.create_unique_constraint("players_token_hash_key", "players", ["token_hash"])
    op.drop_index("tokens_player_id", table_name="tokens")
    op.drop_table("tokens")
