"""A request path reaches the log as a Python string literal: a newline sent in it (``%0a``)
cannot start a line of its own that looks like the service's."""

from __future__ import annotations

import logging

import pytest
from litestar import Request

from service.http.problems import EXCEPTION_HANDLERS


def test_an_unexpected_error_logs_its_path_escaped(caplog: pytest.LogCaptureFixture) -> None:
    scope = {"type": "http", "method": "GET", "path": "/web/x\nINFO canfield: forged", "headers": [],
             "query_string": b"", "state": {}}
    request: Request = Request(scope)  # type: ignore[arg-type]
    with caplog.at_level(logging.ERROR, logger="canfield"):
        response = EXCEPTION_HANDLERS[Exception](request, RuntimeError("boom"))
    assert response.status_code == 500
    [record] = caplog.records
    assert "\n" not in record.getMessage()
    assert "\\nINFO canfield: forged" in record.getMessage()
