"""What service.http.framework_adapter assumes of Litestar's internals, checked against the Litestar
installed: a release that changes them fails here, by name, before it fails a move.

An app of its own with one ASGI route that has a path parameter, as the move route does, and a
handler that records the scope it is handed."""

from __future__ import annotations

import inspect
import uuid
from typing import Annotated, Any

import pytest
from litestar import Litestar, asgi, get
from litestar._asgi.routing_trie.traversal import traverse_route_map
from litestar.params import PathParameter
from litestar.testing import TestClient

from service.http.framework_adapter import as_routed, route_asgi_parameters
from service.http.move_route import MOVE_PATH, TEMPLATE

THING = uuid.UUID(int=7)
SAMPLE = f"/games/{uuid.UUID(int=0)}/moves"


def _app(seen: list[dict[str, Any]]) -> Litestar:
    @asgi(MOVE_PATH, copy_scope=False)
    async def route(scope: Any, receive: Any, send: Any) -> None:
        seen.append({"path_params": scope["path_params"], "path_template": scope["path_template"]})
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    return Litestar(route_handlers=[route], logging_config=None)


def test_the_trie_lookup_the_adapter_calls_is_still_there() -> None:
    parameters = list(inspect.signature(traverse_route_map).parameters)
    assert parameters == ["root_node", "path"], "litestar._asgi.routing_trie.traversal.traverse_route_map changed"
    app = _app([])
    node, values, _ = traverse_route_map(root_node=app.asgi_router.root_route_map_node, path=SAMPLE)
    assert node.is_asgi
    assert values == [str(uuid.UUID(int=0))]
    assert set(node.path_parameters) == {"asgi"}, "an ASGI route's path parameters are no longer filed under 'asgi'"


@pytest.mark.parametrize("method", ["POST", "GET", "OPTIONS"])
def test_without_the_adapter_the_router_fails_an_asgi_route_with_a_path_parameter(method: str) -> None:
    """The Litestar bug the adapter works around. When this fails, Litestar has fixed it:
    ``route_asgi_parameters`` and its call in the app can go."""
    seen: list[dict[str, Any]] = []
    with TestClient(_app(seen)) as client:
        response = client.request(method, f"/games/{THING}/moves")
    assert (response.status_code, seen) == (500, [])


@pytest.mark.parametrize("method", ["POST", "GET", "OPTIONS"])
def test_with_the_adapter_every_method_reaches_the_route_with_its_parameter(method: str) -> None:
    seen: list[dict[str, Any]] = []
    app = _app(seen)
    route_asgi_parameters(app, SAMPLE)
    with TestClient(app) as client:
        response = client.request(method, f"/games/{THING}/moves")
    assert response.status_code == 204
    assert seen == [{"path_params": {"game_id": THING}, "path_template": TEMPLATE}]


def test_a_request_handed_over_without_the_router_gets_the_scope_the_router_would_set() -> None:
    seen: list[dict[str, Any]] = []
    app = _app(seen)
    route_asgi_parameters(app, SAMPLE)
    with TestClient(app) as client:
        client.post(f"/games/{THING}/moves")
    scope: dict[str, Any] = {}
    as_routed(scope, {"game_id": THING}, TEMPLATE)
    assert seen == [scope]


def test_the_adapter_refuses_a_path_that_leads_to_no_asgi_route() -> None:
    @get("/games/{game_id:uuid}")
    async def game(game_id: Annotated[uuid.UUID, PathParameter()]) -> str:
        return str(game_id)

    app = Litestar(route_handlers=[game], logging_config=None)
    with pytest.raises(RuntimeError, match="not routed to an ASGI route"):
        route_asgi_parameters(app, f"/games/{THING}")
