"""Target forms shared by every Sessionstore client: the URL the server logs, or a gRPC target."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

import grpc


def resolve_target(
    target: str, credentials: grpc.ChannelCredentials | None
) -> tuple[str, grpc.ChannelCredentials | None]:
    """Returns the gRPC target and the credentials to use (None: plaintext).

    `http://host[:port]` is plaintext and `https://host[:port]` is TLS with the
    system roots (ports default to 80 and 443). Anything else is a gRPC target
    (`host:port`, `dns:///host:port`, `unix:///path`): plaintext to loopback
    and unix sockets, TLS with the system roots to any other host. Explicit
    credentials always win.
    """
    if not target:
        raise ValueError("sessionstore: empty target")
    if target.startswith(("http://", "https://")):
        parts = urlsplit(target)
        if not parts.hostname or parts.path not in ("", "/") or parts.query or parts.fragment:
            raise ValueError(f"sessionstore: target {target!r}: want http(s)://host[:port] with no path")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        grpc_target = f"{host}:{port}"
        if credentials is None and parts.scheme == "https":
            credentials = grpc.ssl_channel_credentials()
        return grpc_target, credentials
    if credentials is None and not is_loopback(target):
        credentials = grpc.ssl_channel_credentials()
    return target, credentials


def is_loopback(grpc_target: str) -> bool:
    if grpc_target.startswith(("unix:", "unix-abstract:")):
        return True
    # A resolver scheme such as "dns:///" or "ipv4:".
    if ":///" in grpc_target:
        grpc_target = grpc_target.split(":///", 1)[1]
    host = grpc_target
    if host.startswith("["):
        host = host[1 : host.find("]")] if "]" in host else host[1:]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
