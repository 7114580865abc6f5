"""The migrations against the SQLAlchemy metadata, and the constraints the event store relies on."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError

from service.store.migrations import alembic_config, migrate, sqlalchemy_url
from service.store.tables import events, games, metadata, players


@pytest.fixture
def engine(database_url: str) -> Iterator[sa.Engine]:
    engine = sa.create_engine(sqlalchemy_url(database_url), poolclass=sa.NullPool)
    yield engine
    engine.dispose()


def test_migrations_create_exactly_the_metadata_tables(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        tables = set(sa.inspect(conn).get_table_names())
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        diff = compare_metadata(context, metadata)
    assert tables == set(metadata.tables) | {"alembic_version"}
    assert diff == [], f"the migrations and service/store/tables.py disagree: {diff}"


def test_migrate_is_idempotent(database_url: str, engine: sa.Engine) -> None:
    head = ScriptDirectory.from_config(alembic_config(database_url)).get_current_head()
    migrate(database_url)  # the fixture already ran it once
    migrate(database_url)
    with engine.connect() as conn:
        versions = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all()
    assert versions == [head]


def test_a_schema_a_later_release_migrated_is_left_as_it_is(database_url: str, engine: sa.Engine) -> None:
    """A process of the previous release (re)started during a rolling deploy, or after the code was
    rolled back, serves on the later release's schema: its migrate step leaves it alone instead of
    failing on a revision its scripts do not hold. An unknown revision that is not a later number
    still fails, as Alembic says."""
    head = ScriptDirectory.from_config(alembic_config(database_url)).get_current_head()
    assert head is not None
    later = f"{int(head) + 1:04d}"
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = :v"), {"v": later})
    try:
        migrate(database_url)
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all() == [later]
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE alembic_version SET version_num = 'zz99'"))
        with pytest.raises(CommandError, match="zz99"):
            migrate(database_url)
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE alembic_version SET version_num = :v"), {"v": head})


def test_events_reject_a_duplicate_game_version(clean_database: str, engine: sa.Engine) -> None:
    player_id, game_id = uuid.uuid4(), uuid.uuid4()
    with engine.begin() as conn:
        conn.execute(players.insert().values(id=player_id, name="Ann"))
        conn.execute(
            games.insert().values(
                id=game_id,
                player_id=player_id,
                ruleset_id="classic",
                ruleset_version=1,
                deal={"seed": 1},
                status="playing",
                version=1,
            )
        )
        conn.execute(events.insert().values(game_id=game_id, version=1, type="GameStarted", data={}))

    with pytest.raises(sa.exc.IntegrityError, match="events_game_id_version_key"), engine.begin() as conn:
        conn.execute(events.insert().values(game_id=game_id, version=1, type="CardDrawn", data={}))

    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(events)).scalar() == 1
        conn.execute(events.insert().values(game_id=game_id, version=2, type="CardDrawn", data={}))  # next is fine
        conn.rollback()


def test_clean_database_starts_empty(clean_database: str, engine: sa.Engine) -> None:
    with engine.connect() as conn:
        for table in (players, games, events):
            assert conn.execute(sa.select(sa.func.count()).select_from(table)).scalar() == 0
