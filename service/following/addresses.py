"""Where a webhook may point: an http(s) URL whose host resolves only to public addresses.

A URL is checked when the hook is made and again before every delivery (a name that resolved to a
public address at creation may resolve to 127.0.0.1 later: DNS rebinding); the delivery then
connects to the very addresses that were checked (``Target.addresses``), with the URL's host name as
the ``Host`` header and the TLS server name. Private, loopback, link-local, shared, multicast,
reserved and unspecified addresses are refused unless ``WEBHOOKS_ALLOW_PRIVATE`` is set (tests).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from ..errors import BadRequest

MAX_URL_LENGTH = 2000
"""The longest webhook URL taken (docs/api.md)."""
RESOLVE_SECONDS = 5.0


class WebhookRefused(BadRequest):
    """A webhook request refused, with its own ``code``."""

    title = "Webhook refused"


@dataclass(frozen=True, slots=True)
class Target:
    """A checked URL: its parts, and the addresses its host resolved to (all allowed)."""

    url: str
    scheme: str
    host: str
    port: int
    target: str  # the path and query, as sent
    addresses: tuple[str, ...]

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        name = f"[{self.host}]" if ":" in self.host else self.host
        return name if self.port == default else f"{name}:{self.port}"

    def address_url(self, address: str) -> str:
        """The URL with ``address`` in place of the host name (what is connected to)."""
        name = f"[{address}]" if ":" in address else address
        return f"{self.scheme}://{name}:{self.port}{self.target}"


def check_url(url: str) -> SplitResult:
    """The parts of a URL a webhook may have; a 400 with its own code for anything else."""
    if len(url) > MAX_URL_LENGTH:
        raise WebhookRefused(f"the webhook URL is {len(url)} characters long; at most {MAX_URL_LENGTH} are taken",
                             "webhook_url_too_long")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a port out of range raises here)
    except ValueError:
        raise WebhookRefused("the webhook URL is not a valid URL", "webhook_url_invalid") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WebhookRefused("the webhook URL must be an absolute http:// or https:// URL with a host name",
                             "webhook_url_invalid")
    if parts.username is not None or parts.password is not None:
        raise WebhookRefused("the webhook URL must not hold a user name or password (deliveries are signed)",
                             "webhook_url_invalid")
    if parts.fragment or any(ch.isspace() or ord(ch) < 0x20 for ch in url):
        raise WebhookRefused("the webhook URL must have no fragment (#...) and no spaces or control characters",
                             "webhook_url_invalid")
    return parts


def allowed(address: str) -> bool:
    """Whether a delivery may connect to ``address``: a public unicast address."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


async def resolve(url: str, allow_private: bool) -> Target:
    """Check ``url`` and resolve its host: every address it resolves to must be allowed (400
    ``webhook_url_private`` otherwise, ``webhook_url_unresolvable`` when it resolves to none)."""
    parts = check_url(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    loop = asyncio.get_running_loop()
    try:
        found = await asyncio.wait_for(loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), RESOLVE_SECONDS)
    except (OSError, TimeoutError, UnicodeError):
        raise WebhookRefused(f"the webhook URL's host {host!r} does not resolve to an address",
                             "webhook_url_unresolvable") from None
    addresses = tuple(dict.fromkeys(str(info[4][0]).split("%")[0] for info in found))
    if not addresses:
        raise WebhookRefused(f"the webhook URL's host {host!r} does not resolve to an address",
                             "webhook_url_unresolvable")
    if not allow_private and not all(allowed(address) for address in addresses):
        raise WebhookRefused(
            f"the webhook URL's host {host!r} resolves to a private, loopback or link-local address: "
            "webhooks are delivered to public addresses only", "webhook_url_private",
        )
    return Target(url, parts.scheme, host, port, target, addresses)
