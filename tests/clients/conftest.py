"""Clients generated from the committed OpenAPI document, against a real server on real PostgreSQL.

The server and database fixtures are those of the API tests (tests/api/conftest.py).
"""

from tests.api.conftest import ann, client, server_url  # noqa: F401  (fixtures, re-used as they are)
