"""Who made each stored idempotent reply, and with which scopes.

``request_keys`` gets two nullable columns (service.http.idempotency):

- ``player_id``: the player the reply belongs to: the bearer token's player, or for
  ``POST /players`` the player it registered (set when the reply is stored). ``DELETE /players/me``
  deletes the rows of the player by it, the registration's reply among them (that row's scope is
  the client address, not the player). An index on it, built ``CONCURRENTLY`` (writes to the table
  go on while it builds; a build that failed halfway is dropped first, so the migration can be
  run again).
- ``scopes``: the scopes the first request's token held. A replay is given only to a token of
  the same player holding every one of them (else ``403 idempotency_key_forbidden``).

Why the previous release keeps working on this schema: it names the columns it reads and writes,
and both new ones are nullable without a default, so its inserts leave them NULL and its reads do
not see them. The new release reads a row the old one wrote safely: a NULL ``scopes`` counts as
every scope (a replay needs a token with all of them: the stricter reading, never "no
requirement"), and a player-scoped row is still found and erased by its scope
(``player:<id>``). What the old release's rows lack: a ``POST /players`` reply it stored has no
``player_id``, so deleting that account leaves it until it expires (IDEMPOTENCY_KEY_HOURS), as
the old release did; an old process replays without the scope check, as it always did, until it
is replaced; and an expired row an old process claims again keeps the columns of its earlier
claim (its statement does not reset them) until the key expires again. The downgrade drops the
index and the columns (the old release never reads them).

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

INDEX = "request_keys_player_id"


def upgrade() -> None:
    op.add_column("request_keys", sa.Column("player_id", postgresql.UUID(as_uuid=True), nullable=True))
    op.add_column("request_keys", sa.Column("scopes", postgresql.ARRAY(sa.Text()), nullable=True))
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")
        op.execute(f"CREATE INDEX CONCURRENTLY {INDEX} ON request_keys (player_id) WHERE player_id IS NOT NULL")


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")
    op.drop_column("request_keys", "scopes")
    op.drop_column("request_keys", "player_id")
