"""grpcio reads the server's error messages exactly as written.

The server percent-encodes grpc-message as the gRPC spec says (only bytes
outside printable ASCII, and `%`), on its own gRPC handler and on Connect's
(a compressed request goes to Connect).
"""

from __future__ import annotations

import grpc
import pytest

from sessionstore.v1 import session_service_pb2, session_service_pb2_grpc

ODD_ID = "naïve 100%,a=b;c/d?e#f&g+h:i@j$k ✓ 日本"


@pytest.mark.parametrize("compression", [None, grpc.Compression.Gzip], ids=["fast path", "through Connect"])
def test_error_message_arrives_as_written(server: str, app_name: str, compression: grpc.Compression | None):
    with grpc.insecure_channel(server) as channel:
        stub = session_service_pb2_grpc.SessionServiceStub(channel)
        request = session_service_pb2.GetSessionRequest(app_name=app_name, user_id="u", session_id=ODD_ID)
        with pytest.raises(grpc.RpcError) as caught:
            stub.GetSession(request, timeout=30, compression=compression)
    err = caught.value
    assert err.code() == grpc.StatusCode.NOT_FOUND
    assert err.details() == f'session "{ODD_ID}" not found for app "{app_name}" and user "u"'
