"""The tables, as SQLAlchemy metadata. Alembic migrations create them; a test checks they agree."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Identity,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSON, JSONB, UUID

metadata = MetaData()

players = Table(
    "players",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("name", Text, nullable=False),
    Column("token_hash", LargeBinary, nullable=False, unique=True),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
)

games = Table(
    "games",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("player_id", UUID(as_uuid=True), ForeignKey("players.id"), nullable=False, index=True),
    Column("ruleset_id", Text, nullable=False),
    Column("ruleset_version", Integer, nullable=False),
    Column("deal", JSONB, nullable=False),
    Column("status", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("snapshot", JSON, nullable=False),  # read and written whole, never queried into
    Column("started_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("finished_at", DateTime(timezone=True), nullable=True),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
)

events = Table(
    "events",
    metadata,
    Column("position", BigInteger, Identity(always=True), primary_key=True),
    Column("game_id", UUID(as_uuid=True), ForeignKey("games.id"), nullable=False),
    Column("version", Integer, nullable=False),
    Column("type", Text, nullable=False),
    Column("data", JSONB, nullable=False),
    Column("metadata", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
    Column("recorded_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    UniqueConstraint("game_id", "version", name="events_game_id_version_key"),
)

idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("game_id", UUID(as_uuid=True), ForeignKey("games.id"), nullable=False),
    Column("key", Text, nullable=False),
    Column("request_hash", LargeBinary, nullable=False),
    Column("response", JSON, nullable=False),  # json, not jsonb: a replay is the same bytes
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    PrimaryKeyConstraint("game_id", "key", name="idempotency_keys_pkey"),
)
