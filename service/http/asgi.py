"""The ASGI application for uvicorn (`uvicorn service.http.asgi:app`), configured from the environment.

`canfield serve` sets DATABASE_URL (to the embedded PostgreSQL if it was unset) before its
workers import this module.
"""

from __future__ import annotations

import os

from service.http.app import create_app
from service.http.request_ids import configure_logging
from service.settings import Settings

configure_logging(os.environ.get("LOG_FORMAT", "json"))  # one JSON line per log record (LOG_FORMAT=text: plain)
app = create_app(Settings.from_env())
