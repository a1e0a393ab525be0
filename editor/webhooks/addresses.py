"""Where a webhook may be sent: no server-side request forgery.

A curator names a URL; the task worker calls it from inside the deployment's network. A URL
whose host resolves to loopback, link-local, private, multicast, reserved or unspecified
addresses (the database, a cloud metadata service at 169.254.169.254, an admin port) is
refused, when the endpoint is saved and again at every send: DNS can change between the two,
so the send connects to the very address it checked (``Target``), never resolves again.

``settings.OCM_WEBHOOKS_ALLOW_PRIVATE`` lifts the address rule (a receiver on the same
machine, the tests' own); the scheme rule (http or https only) stays.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

from editor.errors import WebhookUrlRefused

SCHEMES = {"http": 80, "https": 443}
MAX_URL_LENGTH = 2000


@dataclass(frozen=True)
class Target:
    """A checked URL: the address to connect to, and what the request must still say of the
    name (``Host`` header, the TLS server name)."""

    scheme: str
    hostname: str
    port: int
    address: str
    path: str

    @property
    def connect_url(self) -> str:
        """The URL with the checked address in place of the name."""
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{self.scheme}://{host}:{self.port}{self.path}"

    @property
    def host_header(self) -> str:
        default = SCHEMES[self.scheme] == self.port
        name = f"[{self.hostname}]" if ":" in self.hostname else self.hostname
        return name if default else f"{name}:{self.port}"


def allows_private() -> bool:
    return bool(getattr(settings, "OCM_WEBHOOKS_ALLOW_PRIVATE", False))


def check_url(url: str) -> Target:
    """The URL as a ``Target`` to connect to, or ``WebhookUrlRefused`` saying why not."""
    if not isinstance(url, str) or not url.strip():
        raise WebhookUrlRefused("Give the URL to send the events to.")
    if len(url) > MAX_URL_LENGTH:
        raise WebhookUrlRefused(f"The URL is longer than {MAX_URL_LENGTH} characters.")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as error:
        raise WebhookUrlRefused(f"Not a URL: {error}.") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise WebhookUrlRefused("Only http:// and https:// URLs can receive webhooks.")
    hostname = parts.hostname
    if not hostname:
        raise WebhookUrlRefused("The URL names no host.")
    port = port or SCHEMES[scheme]
    addresses = resolve(hostname, port)
    if not allows_private():
        refused = [str(address) for address in addresses if not is_public(address)]
        if refused:
            raise WebhookUrlRefused(
                f"{hostname} resolves to {', '.join(refused)}: loopback, private, link-local, "
                "multicast and reserved addresses cannot receive webhooks.",
                details={"host": hostname, "addresses": refused},
            )
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    return Target(scheme, hostname, port, str(addresses[0]), path)


def resolve(hostname: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """Every address ``hostname`` resolves to (a literal address is itself)."""
    try:
        infos = socket.getaddrinfo(hostname, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        raise WebhookUrlRefused(f"{hostname} does not resolve ({error}).") from None
    addresses = []
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise WebhookUrlRefused(f"{hostname} does not resolve.")
    return addresses


def is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether a webhook may be sent to ``address``: a global unicast address (an IPv6 one
    that maps or embeds an IPv4 address is judged by that address)."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is not None:
            return is_public(embedded)
    return address.is_global and not (
        address.is_loopback
        or address.is_link_local
        or address.is_private
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    )
