"""The OpenAPI document of each API version, made from the code's (the newest) by the version
changes since (``VersionChange.downgrade_schema``, newest first), as a request of that version is
answered. Each document declares its own version: ``info.version`` is its date and its
``Api-Version`` parameter takes that one value, so a client generated from it sends it.

``GET /schema/openapi.json?version=<date>`` serves a version's document; without ``version``, the
document of the request's ``Api-Version`` (without that too, the oldest served, like any request).
``canfield openapi`` writes them all to openapi/ (``<version>.json`` each; ``openapi.json`` is the
oldest's, the document of a request that names no version).
"""

from __future__ import annotations

import copy
from typing import Any

import msgspec
from litestar import Request
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin

from ...errors import ServiceError
from ..versions import SERVED, Version, Versions

JSON = dict[str, Any]


class UnsupportedVersion(ServiceError):
    code = "unsupported_version"


def document_of(newest: JSON, version: Version, versions: Versions = SERVED) -> JSON:
    """``newest`` (the code's document, unchanged) as the document of ``version``."""
    document = copy.deepcopy(newest)
    later = [change for newer in versions.all[versions.all.index(version) + 1:] for change in newer.introduced]
    for change in reversed(later):
        change.downgrade_schema(document)
    document["info"]["version"] = version.name
    parameter = document["components"]["parameters"]["Api-Version"]
    parameter["schema"]["enum"] = [version.name]  # no default: a generated client sends the one set on it
    parameter["description"] = (
        f"the API version this document describes, {version.name}: set it once on a client, for every request "
        "(without it, a request gets the oldest version served; GET /versions lists them)"
    )
    return document


class VersionedJson(JsonRenderPlugin):
    """Litestar's ``/schema/openapi.json``, of the version asked for (``?version=``, else the
    request's ``Api-Version``); each version's document is made once, then kept."""

    def __init__(self, versions: Versions = SERVED) -> None:
        super().__init__()
        self.versions = versions
        self._made: dict[str, bytes] = {}

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        asked = request.query_params.get("version")
        version: Version | bytes = request.scope.get("api_version") or self.versions.oldest  # type: ignore[assignment]
        if asked is not None:
            version = self.versions.requested([(b"api-version", asked.encode("latin-1"))])
        if not isinstance(version, Version):
            raise UnsupportedVersion(self.versions.refusal(version, "'version'"))
        made = self._made.get(version.name)
        if made is None:
            made = self._made[version.name] = msgspec.json.encode(document_of(openapi_schema, version, self.versions))
        return made


def versioned_json(config: OpenAPIConfig) -> OpenAPIConfig:
    """``config`` with its ``openapi.json`` served by ``VersionedJson`` (its other pages kept)."""
    plugins = [plugin for plugin in config.render_plugins if not plugin.has_path("/openapi.json")]
    config.render_plugins = [VersionedJson(), *plugins]
    return config
