"""Python client for Sessionstore.

`SessionStoreClient` is the plain gRPC client; `GrpcSessionService` (needs the
`adk` extra) is a drop-in Google ADK session service. The generated messages
and stubs are `sessionstore.v1.*_pb2` / `*_pb2_grpc`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sessionstore_client.client import SessionStoreClient

if TYPE_CHECKING:
    from sessionstore_client.adk import GrpcSessionService

__all__ = ["GrpcSessionService", "SessionStoreClient"]


def __getattr__(name: str) -> Any:
    # Lazy: google-adk is an optional extra.
    if name == "GrpcSessionService":
        from sessionstore_client.adk import GrpcSessionService

        return GrpcSessionService
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
