"""The API's versions (``GET /versions``)."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from .common import Body

VersionDate = Annotated[str, Meta(pattern=r"^\d{4}-\d{2}-\d{2}$", description="a version's name: its date")]


class ApiVersionView(Body):
    version: VersionDate
    changes: Annotated[list[str], Meta(description="what this version changed, in words")]
    deprecated: Annotated[str | None, Meta(description="the date it was deprecated (a newer version replaced it)")]
    sunset: Annotated[str | None, Meta(description="the date after which it is no longer served")]


class ApiVersionList(Body):
    default: Annotated[VersionDate, Meta(description="the version of a request that sends no Api-Version")]
    newest: Annotated[VersionDate, Meta(description="the version new clients should send")]
    versions: Annotated[list[ApiVersionView], Meta(description="every version served, oldest first")]
