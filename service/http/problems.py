"""Every error becomes an RFC 9457 problem with a stable ``code``, here and nowhere else."""

from __future__ import annotations

import logging
from typing import Any

import msgspec
from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi.datastructures import ResponseSpec

from domain import DomainError, GameOver, IllegalMove

from ..context import REQUEST_ID
from ..errors import DailyAlreadyPlayed, ServiceError
from ..store.connections import DATABASE_DOWN_ERRORS, PrimaryUnavailable
from .paths import NOT_FOUND, as_sent, malformed, trailing_slash
from .schemas import Problem
from .wording import choices, explain, json_problem

PROBLEM_JSON = "application/problem+json"
log = logging.getLogger("canfield")

_TITLES = {
    400: "Invalid request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    406: "Not acceptable",
    409: "Game over",
    412: "Version conflict",
    413: "Request body too large",
    415: "Unsupported media type",
    422: "Illegal move",
    429: "Too many requests",
    500: "Internal error",
    503: "Service unavailable",
}
_HTTP_CODES = {
    400: "invalid_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
    503: "unavailable",
}


def problem_document(status: int, code: str, detail: str, title: str | None = None) -> Problem:
    """The body of every problem, also for answers given in front of Litestar (service.http.limits)."""
    request_id = REQUEST_ID.get()
    return Problem(
        type=f"urn:canfield:problem:{code}",
        title=title or _TITLES.get(status, "Error"),
        status=status,
        detail=detail,
        code=code,
        instance=None if request_id is None else f"urn:canfield:request:{request_id}",
    )


def problem(
    status: int, code: str, detail: str, headers: dict[str, str] | None = None, title: str | None = None
) -> Response[Problem]:
    body = problem_document(status, code, detail, title)
    return Response(body, status_code=status, media_type=PROBLEM_JSON, headers=headers or {})


def _domain_error(_: Request[Any, Any, Any], error: DomainError) -> Response[Problem]:
    if isinstance(error, IllegalMove):
        return problem(422, "illegal_move", error.reason)
    if isinstance(error, GameOver):
        return problem(409, "game_over", error.reason)
    return problem(400, "invalid_request", error.reason)


def _service_error(_: Request[Any, Any, Any], error: ServiceError) -> Response[Problem]:
    response = problem(error.status, error.code, error.detail, error.headers, error.title)
    if isinstance(error, DailyAlreadyPlayed) and error.game is not None:
        response.content = msgspec.structs.replace(response.content, game=error.game)
    return response


def _validation_error(request: Request[Any, Any, Any], error: ValidationException) -> Response[Problem]:
    return problem(400, _validation_code(error), _validation_detail(request, error))


_PARAMETER_CODES = {"limit": "limit_out_of_range", "cursor": "cursor_invalid"}
"""The codes of a list's refused ``limit`` and ``cursor`` (service.http.pages)."""


def _validation_code(error: ValidationException) -> str:
    extra = error.extra
    if isinstance(extra, list) and extra and all(isinstance(item, dict) for item in extra):
        keys = {(getattr(item.get("source"), "value", item.get("source")), item.get("key")) for item in extra}
        if len(keys) == 1:
            ((source, key),) = keys
            if source == "query" and key in _PARAMETER_CODES:
                return _PARAMETER_CODES[str(key)]
    return "invalid_request"


_SOURCES = {"query": "query parameter", "path": "path parameter", "header": "header", "cookie": "cookie"}


def _validation_detail(request: Request[Any, Any, Any], error: ValidationException) -> str:
    """What Litestar refused (a parameter, or a body that is no JSON), in our words."""
    extra = error.extra
    if isinstance(extra, list) and extra:
        parts = []
        for item in extra[:3]:
            if isinstance(item, dict):
                message = str(item.get("message", "invalid value"))
                key = str(item.get("key") or "")
                source = getattr(item.get("source"), "value", item.get("source"))
                if source == "body" and message == f"'{key}'":  # no body at all (Litestar's KeyError)
                    parts.append("the request needs a JSON body")
                    continue
                where = f"{_SOURCES.get(str(source), 'parameter')} '{key[:40]}'"
                allowed = _choices_of(request, key)
                rule = "one of " + ", ".join(allowed) if allowed else None
                parts.append(explain(message, _given(request, str(source), key), where, rule=rule))
        if parts:
            return "; ".join(parts)[:500]
    return json_problem(str(error.detail or ""))


def _choices_of(request: Request[Any, Any, Any], key: str) -> list[str]:
    field = request.route_handler.parsed_fn_signature.parameters.get(key)
    return choices(field.annotation) if field is not None else []


def _given(request: Request[Any, Any, Any], source: str, key: str) -> object:
    if source == "query":
        return request.query_params.get(key)
    if source == "path":
        return request.path_params.get(key)
    if source == "header":
        return request.headers.get(key)
    return None


def _http_error(request: Request[Any, Any, Any], error: HTTPException) -> Response[Problem]:
    status = error.status_code
    path = request.scope.get("path", "")
    if status in (404, 405) and (slash := trailing_slash(as_sent(request.scope))) is not None:
        return problem(404, "not_found", slash)
    code = _HTTP_CODES.get(status, "invalid_request" if status < 500 else "unavailable")
    if status == 404:
        detail = malformed(path, [route.path for route in request.app.routes]) or NOT_FOUND
    elif status == 405:
        detail = "this path does not take that method"
    elif status == 413:
        detail = "the request body is larger than this service accepts"
    elif status >= 500:
        detail = "the service could not answer; try again"
    else:
        detail = str(error.detail)[:300] if error.detail else _TITLES.get(status, "error")
    headers = dict(error.headers or {})
    if status == 503:
        headers.setdefault("Retry-After", "1")
    return problem(status, code, detail, headers)


def _database_down(_: Request[Any, Any, Any], error: Exception) -> Response[Problem]:
    log.warning("database unavailable: %s", type(error).__name__)
    # no primary (down, a standby, an old primary fenced off): its reason, which names no host
    reason = str(error) if isinstance(error, PrimaryUnavailable) else "the database is not answering"
    return problem(503, "unavailable", f"{reason}; try again shortly", {"Retry-After": "1"})


def _unexpected(request: Request[Any, Any, Any], error: Exception) -> Response[Problem]:
    if isinstance(error, DATABASE_DOWN_ERRORS):
        return _database_down(request, error)
    if isinstance(error, RecursionError) and "deserializ" in str(error):  # msgspec on runaway nesting
        return problem(400, "invalid_request", "the JSON body is nested too deeply")
    # the path as Python writes a string literal: a newline or escape sent in it cannot forge a log line
    log.exception("unhandled error on %s %r", request.method, request.scope.get("path", ""))
    return problem(500, "internal_error", "an unexpected error happened; it has been logged")


EXCEPTION_HANDLERS: dict[Any, Any] = {
    DomainError: _domain_error,
    ServiceError: _service_error,
    ValidationException: _validation_error,
    HTTPException: _http_error,
    Exception: _unexpected,
}
for _error_type in DATABASE_DOWN_ERRORS:
    EXCEPTION_HANDLERS[_error_type] = _database_down


def documented(*statuses: int) -> dict[int, ResponseSpec]:
    """OpenAPI entries for the problems an operation can answer with."""
    return {
        status: problem_response(_TITLES.get(status, "Error") + f" (problem+json, code {_code_for(status)})")
        for status in statuses
    }


def problem_response(description: str) -> ResponseSpec:
    """The OpenAPI entry of a problem answer, described in the operation's own words (its codes)."""
    return ResponseSpec(data_container=Problem, description=description, media_type=PROBLEM_JSON,
                        generate_examples=False)


def with_codes(responses: dict[int, ResponseSpec], status: int, *codes: str) -> dict[int, ResponseSpec]:
    """``responses`` with ``codes`` added to those its ``status`` entry names (an operation's own
    refusals next to the shared ones)."""
    described = responses[status].description or ""
    description = described[:-1] + ", " + ", ".join(codes) + ")" if described.endswith(")") else described
    return {**responses, status: problem_response(description)}


def _code_for(status: int) -> str:
    return {409: "game_over", 412: "version_conflict", 422: "illegal_move"}.get(status) or _HTTP_CODES.get(
        status, "invalid_request"
    )


__all__ = [
    "EXCEPTION_HANDLERS", "MediaType", "documented", "problem", "problem_document", "problem_response", "with_codes",
]
