"""The Python side of the cross-language test: the same two commands as the Go
and TypeScript CLIs, with messages as canonical protobuf JSON.

    python -m sessionstore_client.cli --url http://127.0.0.1:50051 get-session APP USER SESSION
    python -m sessionstore_client.cli --url http://127.0.0.1:50051 append-event APP USER SESSION < event.json

Output is one line of protobuf JSON (lowerCamelCase names, int64 as strings,
bytes as base64). A failed call prints "sessionstore-cli: CODE: message" to
stderr and exits 1; bad arguments or stdin that is not an Event exit 2.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message

from sessionstore.v1 import event_pb2
from sessionstore.v1 import session_service_pb2 as pb
from sessionstore_client.client import SessionStoreClient

_PROG = "sessionstore-cli"


def to_json_line(message: Message) -> str:
    """Canonical protobuf JSON on one line, UTF-8 text kept as is."""
    data = _integral_numbers_as_ints(json_format.MessageToDict(message))
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"


def _integral_numbers_as_ints(value: Any) -> Any:
    # json_format writes every Struct number as a float (3 -> 3.0). The same
    # double, but the Go and TypeScript CLIs write 3, and so does this one.
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, dict):
        return {key: _integral_numbers_as_ints(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_integral_numbers_as_ints(item) for item in value]
    return value


async def _call(args: argparse.Namespace, stdin: bytes) -> Message:
    metadata = [("authorization", f"Bearer {args.token}")] if args.token else []
    async with SessionStoreClient(args.url, timeout=args.timeout, metadata=metadata) as client:
        if args.command == "get-session":
            request = pb.GetSessionRequest(app_name=args.app, user_id=args.user, session_id=args.session)
            return await client.get_session(request)
        event = event_pb2.Event()
        json_format.Parse(stdin.decode("utf-8"), event)
        return await client.append_event(app_name=args.app, user_id=args.user, session_id=args.session, event=event)


def _camel(code: grpc.StatusCode) -> str:
    # NOT_FOUND -> NotFound, as the Go CLI prints codes.
    return "".join(word.capitalize() for word in code.name.split("_"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=_PROG, description="Calls a Sessionstore server with protobuf JSON.")
    parser.add_argument("--url", default=os.environ.get("SESSIONSTORE_URL", "http://127.0.0.1:50051"))
    parser.add_argument("--token", default=os.environ.get("SESSIONSTORE_TOKEN", ""))
    parser.add_argument("--timeout", type=float, default=30.0, help="deadline per call, in seconds")
    parser.add_argument("command", choices=["get-session", "append-event"])
    parser.add_argument("app")
    parser.add_argument("user")
    parser.add_argument("session")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2

    stdin = sys.stdin.buffer.read() if args.command == "append-event" else b""
    try:
        response = asyncio.run(_call(args, stdin))
    except (ValueError, json_format.ParseError) as e:
        # A bad --url, stdin that is not UTF-8 or not an Event in protobuf JSON.
        print(f"{_PROG}: {e}", file=sys.stderr)
        return 2
    except grpc.aio.AioRpcError as e:
        print(f"{_PROG}: {_camel(e.code())}: {e.details()}", file=sys.stderr)
        return 1
    sys.stdout.buffer.write(to_json_line(response).encode("utf-8"))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
