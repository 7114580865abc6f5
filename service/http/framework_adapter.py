"""Where the move route leans on Litestar's internals: here only, each assumption checked by
tests/unit/test_framework_adapter.py, which fails when a Litestar release breaks it (pyproject.toml
keeps Litestar below its next minor version, so an upgrade is a deliberate step that runs it).

* ``route_asgi_parameters``: Litestar (up to 2.25 at least) files an ASGI route's path parameters
  under ``"asgi"`` in its routing trie (``litestar._asgi.routing_trie``, private) but looks them
  up under the request's method, so an ASGI route with a path parameter answers every request the
  router hands it with a KeyError (a 500). This answers every method's lookup with the ``"asgi"``
  entry, on the trie node of one route.
* ``as_routed``: the scope keys Litestar's router sets for a route (``path_params``, read by
  ``Request.path_params``, and ``path_template``, read by the access log, the metrics and the
  traces), for a request handed to a route without the router (``move_route.MoveDispatch``).
"""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar._asgi.routing_trie.traversal import traverse_route_map


class _AnyMethod(dict[Any, Any]):
    """A route node's path parameters by method, the same for every method (an ASGI route's)."""

    def __missing__(self, method: Any) -> Any:
        return self["asgi"]


def route_asgi_parameters(app: Litestar, sample_path: str) -> None:
    """Let the router parse the path parameters of the ASGI route ``sample_path`` leads to, for any
    HTTP method (see the module's docstring)."""
    node, _, _ = traverse_route_map(root_node=app.asgi_router.root_route_map_node, path=sample_path)
    if not node.is_asgi:
        raise RuntimeError(f"{sample_path} is not routed to an ASGI route")
    parameters: dict[Any, Any] = node.path_parameters
    node.path_parameters = _AnyMethod(parameters)


def as_routed(scope: Any, path_params: dict[str, Any], template: str) -> None:
    """Set in ``scope`` what Litestar's router sets for a route of ``template`` (``"/games/{game_id}/moves"``,
    as the router writes it: without the parameters' types) whose path parameters are ``path_params``."""
    scope["path_params"] = path_params
    scope["path_template"] = template
