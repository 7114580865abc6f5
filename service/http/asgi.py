"""The ASGI application for uvicorn (`uvicorn service.http.asgi:app`), configured from the environment.

`canfield serve` sets DATABASE_URL (to the embedded PostgreSQL if it was unset) before its
workers import this module.
"""

from __future__ import annotations

from service.http.app import create_app
from service.settings import Settings

app = create_app(Settings.from_env())
