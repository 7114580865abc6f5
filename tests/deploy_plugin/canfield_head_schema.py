"""A pytest plugin for the previous release's test session (``-p canfield_head_schema``, this
folder on its ``PYTHONPATH``): its test database is migrated by the CURRENT code, to the current
head, instead of by its own migrations. So its tests run against the schema the new release
leaves behind, as its processes do in a rolling deploy.

Its ``tests/conftest.py`` makes a fresh database and calls ``service.store.migrations.migrate``
(looked up when the fixture runs, so replacing the module's attribute here, before any conftest is
imported, replaces it there). The current code migrates with its own interpreter
(``CANFIELD_HEAD_PYTHON``, in ``CANFIELD_HEAD_ROOT``), and the revision it left is written to
``CANFIELD_HEAD_RECORD`` for the calling test to check. Imports only the standard library and
the previous release's own ``service`` package."""

from __future__ import annotations

import os
import subprocess

import service.store.migrations as migrations

MIGRATE = (
    "import sys, psycopg\n"
    "from service.store.migrations import migrate\n"
    "migrate(sys.argv[1])\n"
    "with psycopg.connect(sys.argv[1]) as conn:\n"
    "    print(conn.execute('SELECT version_num FROM alembic_version').fetchone()[0])\n"
)


def migrate_with_the_current_code(url: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # its own code, not this release's
    done = subprocess.run([os.environ["CANFIELD_HEAD_PYTHON"], "-c", MIGRATE, url], check=False,
                          cwd=os.environ["CANFIELD_HEAD_ROOT"], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"the current code could not migrate the test database:\n{done.stderr[-3000:]}")
    with open(os.environ["CANFIELD_HEAD_RECORD"], "a") as record:
        record.write(done.stdout.strip().splitlines()[-1] + "\n")


migrations.migrate = migrate_with_the_current_code  # type: ignore[assignment]
