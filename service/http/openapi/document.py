"""The finished OpenAPI document: ``complete`` gives every declared response header its schema
(``ETag``, ``Location``, ``Idempotent-Replayed`` as each operation declares them with
``response_headers``; ``Retry-After`` on every 429 and 503, ``WWW-Authenticate`` on 401), every
non-JSON body its schema (service.http.openapi.bodies), ``Api-Version`` to every operation and
answer, the conditional GETs their ETag, If-None-Match and 304, and parameters that are never
null; the Structs as ``refine`` (service.http.openapi.structs) states them.
"""

from __future__ import annotations

from litestar.datastructures import ResponseHeader
from litestar.openapi.spec import (
    OpenAPI,
    OpenAPIHeader,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Parameter,
    Reference,
    Schema,
)

from ..problems import PROBLEM_JSON
from ..versions import SERVED
from .bodies import ALSO, BODIES, MESSAGES, OWN_BODIES
from .patterns import ETAG
from .structs import refine


def _header(schema: Schema, description: str, required: bool = True) -> OpenAPIHeader:
    return OpenAPIHeader(schema=schema, description=description, required=required)


HEADERS: dict[str, OpenAPIHeader] = {
    "ETag": _header(
        Schema(type=OpenAPIType.STRING, pattern=ETAG),
        'the game\'s version in quotes, e.g. "7": send it as If-Match; "7-hidden" while an ended game\'s face-down '
        "cards are still withheld (its view changes when they are shown)",
    ),
    "Location": _header(
        Schema(type=OpenAPIType.STRING), "the path of what was created, e.g. /games/{id} or /races/{id}"
    ),
    "Idempotent-Replayed": _header(
        Schema(type=OpenAPIType.STRING, enum=["true"]),
        '"true" when an Idempotency-Key returned the first result again (nothing was created or appended); absent '
        "otherwise",
        required=False,
    ),
    "Retry-After": _header(Schema(type=OpenAPIType.INTEGER, minimum=1), "whole seconds to wait before trying again"),
    "Link": _header(
        Schema(type=OpenAPIType.STRING),
        'only when more follow: <the request of the next page>; rel="next" (an ndjson export a limit cut short: '
        "the same path with ?after=N; a list in the newest style: the same path with ?cursor=)",
        required=False,
    ),
    "WWW-Authenticate": _header(Schema(type=OpenAPIType.STRING), 'Bearer realm="canfield"'),
}
API_VERSION_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
_API_VERSION = _header(
    Schema(type=OpenAPIType.STRING, pattern=API_VERSION_PATTERN),
    "the API version whose shapes this answer has (GET /versions lists them)",
)
_API_VERSION_PARAMETER = Parameter(
    name="Api-Version",
    param_in="header",
    required=False,
    schema=Schema(type=OpenAPIType.STRING, enum=[version.name for version in SERVED.all]),
    description=(
        "the API version whose shapes the request is written in and wants back (a date, YYYY-MM-DD; GET /versions "
        "lists them). Without it, the oldest version served. Set it once on a client, for every request."
    ),
)
_STATUS_HEADERS = {"304": ["ETag"], "401": ["WWW-Authenticate"], "429": ["Retry-After"], "503": ["Retry-After"]}
_IN_PROGRESS = _header(
    Schema(type=OpenAPIType.INTEGER, minimum=1),
    "with request_in_progress: whole seconds to wait before sending the request again",
    required=False,
)


def _not_null(schema: Schema) -> None:
    """A parameter is text in a URL or a header, never JSON's null: an optional one is left out.
    (Litestar documents ``X | None = None`` as nullable; generators then make odd unions of it.)"""
    if isinstance(schema.type, list) and OpenAPIType.NULL in schema.type:
        rest = [kind for kind in schema.type if kind != OpenAPIType.NULL]
        schema.type = rest[0] if len(rest) == 1 else rest
    if schema.enum is not None:
        schema.enum = [value for value in schema.enum if value is not None]
    if schema.one_of is not None:
        rest = [
            branch for branch in schema.one_of if not (isinstance(branch, Schema) and branch.type == OpenAPIType.NULL)
        ]
        if len(rest) == 1 and isinstance(rest[0], Schema):
            schema.one_of = None
            for name, value in vars(rest[0]).items():
                if value is not None and getattr(schema, name) is None:
                    setattr(schema, name, value)
        else:
            schema.one_of = rest


def response_headers(*names: str) -> list[ResponseHeader]:
    """The headers an operation's success response carries, for its decorator (``complete`` adds
    their schemas from ``HEADERS``)."""
    return [ResponseHeader(name=name, documentation_only=True, description=HEADERS[name].description) for name in names]


_IF_NONE_MATCH = Parameter(
    name="If-None-Match",
    param_in="header",
    required=False,
    description='ETags the client holds, e.g. "7" or W/"7" (weak comparison; * for any): 304 if one is current',
    schema=Schema(type=OpenAPIType.STRING),
)
_CACHE_CONTROL = _header(
    Schema(type=OpenAPIType.STRING),
    "no-cache (revalidate with the ETag), private when a token was sent; immutable for what never changes",
)


def _conditional(operation: Operation) -> None:
    """A GET that answers JSON: its 200 carries an ETag and Cache-Control, If-None-Match may name
    the ETag, and a match is a 304 (service.http.caching)."""
    ok = (operation.responses or {}).get("200")
    if not isinstance(ok, OpenAPIResponse) or "application/json" not in (ok.content or {}):
        return
    headers = dict(ok.headers or {})
    headers.setdefault(
        "ETag", _header(Schema(type=OpenAPIType.STRING), "the representation's tag: send it as If-None-Match")
    )
    headers["Cache-Control"] = _CACHE_CONTROL
    ok.headers = headers
    parameters = list(operation.parameters or [])
    if not any(isinstance(p, Parameter) and p.name.lower() == "if-none-match" for p in parameters):
        parameters.append(_IF_NONE_MATCH)
    operation.parameters = parameters
    responses = dict(operation.responses or {})
    responses.setdefault("304", OpenAPIResponse(description="If-None-Match named the current ETag: nothing changed",
                                                headers={"ETag": headers["ETag"]}))
    operation.responses = dict(sorted(responses.items()))


def _refuses_unknown_versions(operation: Operation) -> None:
    """Every operation may answer 400 unsupported_version (an Api-Version not served): its 400
    says so, and one that had no 400 gets it."""
    responses = operation.responses = dict(operation.responses or {})
    found = responses.get("400")
    words = "unsupported_version: an Api-Version that is not served"
    if isinstance(found, OpenAPIResponse):
        found.description = f"{found.description}; {words}"
        return
    responses["400"] = OpenAPIResponse(
        description=f"Invalid request (problem+json, code {words})",
        content={PROBLEM_JSON: OpenAPIMediaType(schema=Reference(ref="#/components/schemas/Problem"))},
    )
    operation.responses = dict(sorted(responses.items()))


def complete(document: OpenAPI) -> None:
    """Give every declared response header its schema (and every 401, 429 and 503 theirs), every
    non-JSON body its schema, and each operation of ``ALSO`` its other media types; the Structs
    as ``refine`` states them."""
    refine(document)
    assert document.components is not None
    assert isinstance(document.components.schemas, dict)
    document.components.schemas.update(MESSAGES)
    document.components.schemas = dict(sorted(document.components.schemas.items()))
    # every operation takes Api-Version and every answer says it (service.http.versions): declared once
    document.components.parameters = {**(document.components.parameters or {}), "Api-Version": _API_VERSION_PARAMETER}
    document.components.headers = {**(document.components.headers or {}), "Api-Version": _API_VERSION}
    for item in (document.paths or {}).values():
        for operation in (item.get, item.post, item.delete):
            if operation is None:
                continue
            for parameter in operation.parameters or []:
                if isinstance(parameter, Parameter) and isinstance(parameter.schema, Schema):
                    _not_null(parameter.schema)
            operation.parameters = [*(operation.parameters or []), Reference(ref="#/components/parameters/Api-Version")]
            _refuses_unknown_versions(operation)
            for status, response in (operation.responses or {}).items():
                if not isinstance(response, OpenAPIResponse):
                    continue
                headers = dict(response.headers or {})
                for name in [*headers, *_STATUS_HEADERS.get(status, [])]:
                    if name in HEADERS:
                        headers[name] = HEADERS[name]
                if status == "409" and "request_in_progress" in (response.description or ""):
                    headers["Retry-After"] = _IN_PROGRESS  # service.http.idempotency
                headers["Api-Version"] = Reference(ref="#/components/headers/Api-Version")  # every answer
                response.headers = headers or None
                bodies = {**BODIES, **OWN_BODIES.get(operation.operation_id or "", {})}
                for media_type, body in (response.content or {}).items():
                    if media_type in bodies:
                        body.schema = bodies[media_type]
                if status == "200" and response.content is not None:
                    for media_type, schema in ALSO.get(operation.operation_id or "", {}).items():
                        response.content[media_type] = OpenAPIMediaType(schema=schema)

    for item in (document.paths or {}).values():
        if item.get is not None:
            _conditional(item.get)  # after the declared headers took their schemas: the game's ETag stays
