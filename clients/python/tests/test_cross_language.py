"""One session, three languages: an event written with any of the Python,
TypeScript and Go clients reads back the same with every one of them.

Each language's CLI prints canonical protobuf JSON; the output is parsed into
the Python generated messages and compared with ==, against each other and
against what was written.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from cli_runners import Clis, assert_all_read_the_same, assert_same, read_everywhere
from google.protobuf import json_format, struct_pb2

from sessionstore.v1 import event_pb2
from sessionstore.v1 import session_service_pb2 as pb
from sessionstore_client import SessionStoreClient

USER = "u1"

# Canonical protobuf JSON, as every language's CLI reads it. Nothing in it
# looks like personal data or a secret, so the server's default write-path
# redaction leaves it alone (the comparison with what was written checks that).
STATE_DELTA: dict[str, Any] = {
    "color": "teal",
    "user:language": "de-CH",
    "user:visits": 3,
    "app:theme": {"name": "dark", "contrast": 1.25},
    "cleared": None,
    "enabled": True,
    "disabled": False,
    "nested": {"list": [1, -2.5, "drei", None, True, {"deep": {"deeper": ["ü", []]}}], "empty": {}},
    "exact_limits": [2**53, -(2**53), 0.30000000000000004, 1e-7, 1.7976931348623157e308, 5e-324],
    "unicode_ключ_键": "значение 值 🚀",
}

RICH_EVENT: dict[str, Any] = {
    "id": "ev-rich-1",
    "invocationId": "inv-7f3a",
    "author": "billing_agent",
    "branch": "root_agent.billing_agent",
    "timestamp": "2021-03-04T05:06:07.123456789Z",
    "turnComplete": True,
    "interrupted": False,
    "finishReason": "STOP",
    "modelVersion": "scripted-2.5",
    "longRunningToolIds": ["call-lookup-1"],
    "content": {
        "role": "model",
        "parts": [
            {"text": "Grüße aus Köln — 東京 🚀 👩‍👩‍👧‍👦 café\u0301 עברית العربية\u2028tab\there\nnul:\u0000 end"},
            {"text": "Weighing the options…", "thought": True, "thoughtSignature": "AP8AEHNpZ/7/"},
            {"text": ""},
            {
                "functionCall": {
                    "id": "call-lookup-1",
                    "name": "lookup_invoice",
                    "args": {
                        "invoice": {"number": "INV-2021-0042", "lines": [{"sku": "A-1", "qty": 2, "price": 19.99}]},
                        "filters": {"status": ["open", "overdue"], "since": None, "include_paid": False},
                        "limit": 25,
                    },
                    "extra": {"partialArgs": [{"path": "invoice.lines", "done": True}]},
                }
            },
            {
                "functionResponse": {
                    "id": "call-lookup-1",
                    "name": "lookup_invoice",
                    "response": {"result": {"total": 39.98, "currency": "EUR", "items": [], "note": "ok ✓"}},
                    "extra": {"scheduling": "WHEN_IDLE"},
                }
            },
            {
                "inlineData": {
                    "mimeType": "application/octet-stream",
                    "data": "AAH/fn+A/v8A",  # 00 01 ff 7e 7f 80 fe ff 00
                    "displayName": "raw.bin",
                }
            },
            {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://example-bucket/reports/q3.pdf"}},
            {"executableCode": {"language": "PYTHON", "code": "print(sum(range(10)))"}},
            {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "45\n"}},
        ],
        "extra": {"futureContentField": {"kept": True}},
    },
    "actions": {
        "stateDelta": STATE_DELTA,
        "artifactDelta": {"invoice.pdf": "3", "huge.bin": "9007199254740993"},
        "transferToAgent": "refund_agent",
        "escalate": True,
        "skipSummarization": False,
        "endOfAgent": True,
        "agentState": {"step": 2, "pending": ["refund"]},
        "requestedToolConfirmations": {"call-lookup-1": {"hint": "confirm the refund", "confirmed": False}},
        "compaction": {
            "startTimestamp": "2021-03-04T05:00:00.000000001Z",
            "endTimestamp": "2021-03-04T05:06:00.500Z",
            "compactedContent": {"role": "model", "parts": [{"text": "Summary: the customer asked about invoice 42."}]},
        },
        "extra": {"futureActionsField": [1, 2, 3]},
    },
    "customMetadata": {"trace": {"span": "a1b2", "sampled": True}, "labels": ["cross", "language"], "nothing": None},
    "usageMetadata": {
        "promptTokenCount": 1234,
        "candidatesTokenCount": 56,
        "totalTokenCount": 1290,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 1234}],
    },
    "groundingMetadata": {"webSearchQueries": ["invoice status"]},
    "citationMetadata": {"citations": [{"startIndex": 0, "endIndex": 5, "title": "Handbuch"}]},
    "extra": {"isolationScope": "billing", "renderHint": {"collapsed": False, "order": 2.5}, "tags": ["a", "β"]},
}

# No id and no timestamp: the server assigns both.
BARE_EVENT: dict[str, Any] = {"author": "user", "content": {"role": "user", "parts": [{"text": "Danke schön!"}]}}

# "python-library" appends with SessionStoreClient; the others are the CLIs.
WRITERS = ["python-library", "python", "typescript", "go"]


def event(data: dict[str, Any]) -> event_pb2.Event:
    return json_format.ParseDict(data, event_pb2.Event())


def test_the_rich_event_is_what_it_claims_to_be():
    # Guards the payload itself: a typo in a JSON name would fail the parse,
    # and these are the bytes the inline data and the signature must keep.
    rich = event(RICH_EVENT)
    parts = rich.content.parts
    assert parts[5].inline_data.data == bytes([0x00, 0x01, 0xFF, 0x7E, 0x7F, 0x80, 0xFE, 0xFF, 0x00])
    assert parts[1].thought and parts[1].thought_signature == b"\x00\xff\x00\x10sig\xfe\xff"
    assert parts[2].WhichOneof("data") == "text" and parts[2].text == ""
    assert rich.timestamp.nanos == 123_456_789
    assert rich.actions.artifact_delta["huge.bin"] == 2**53 + 1
    assert rich.actions.HasField("skip_summarization") and rich.HasField("interrupted")


async def append(
    writer: str, client: SessionStoreClient, clis: Clis, app: str, session_id: str, data: dict[str, Any]
) -> pb.AppendEventResponse:
    if writer == "python-library":
        return await client.append_event(app_name=app, user_id=USER, session_id=session_id, event=event(data))
    return await clis.append_event(writer, app, USER, session_id, json.dumps(data, ensure_ascii=False))


@pytest.mark.parametrize("writer", WRITERS)
async def test_an_event_written_in_any_language_reads_the_same_in_all(
    writer: str, server: str, clis: Clis, app_name: str
):
    async with SessionStoreClient(server, timeout=30) as client:
        created = (await client.create_session(app_name=app_name, user_id=USER)).session
        rich = await append(writer, client, clis, app_name, created.id, RICH_EVENT)
        bare = await append(writer, client, clis, app_name, created.id, BARE_EVENT)
        reads = await read_everywhere(client, clis, app_name, USER, created.id)

    session = assert_all_read_the_same(reads).session

    # What was written, with the server's part filled in: seq always, and the
    # id and timestamp the bare event left unset.
    want_rich = event(RICH_EVENT)
    want_rich.seq = 1
    assert bare.event.id and bare.event.HasField("timestamp")
    uuid.UUID(bare.event.id)  # a server-generated id is a UUID
    want_bare = event(BARE_EVENT)
    want_bare.seq = 2
    want_bare.id = bare.event.id
    want_bare.timestamp.CopyFrom(bare.event.timestamp)
    assert_same(want_rich, session.events[0], f"the rich event written by {writer}")
    assert_same(want_bare, session.events[1], f"the bare event written by {writer}")
    assert len(session.events) == 2

    # The writer's AppendEventResponse agrees with every reader.
    assert [(r.stored, r.duplicate, r.revision) for r in (rich, bare)] == [(True, False, 1), (True, False, 2)]
    assert_same(session.events[0], rich.event, f"{writer}'s AppendEventResponse for the rich event")
    assert_same(session.events[1], bare.event, f"{writer}'s AppendEventResponse for the bare event")

    # The session around the events: the state is the whole delta (app: and
    # user: keys merged back, null kept), times and revision from the server.
    assert (session.id, session.app_name, session.user_id, session.revision) == (created.id, app_name, USER, 2)
    assert_same(json_format.ParseDict(STATE_DELTA, struct_pb2.Struct()), session.state, "the session state")
    assert session.create_time == created.create_time
    # The rich event is dated 2021, in the past: it does not move the update
    # time back; the bare one, stamped by the server, is the latest change.
    assert session.last_update_time == bare.event.timestamp == bare.last_update_time
    assert rich.last_update_time == created.last_update_time
    assert session.last_update_time.ToNanoseconds() >= created.create_time.ToNanoseconds()


async def test_every_language_reports_a_missing_session_as_not_found(clis: Clis, app_name: str):
    for language in clis.languages:
        code, out, err = await clis.run_raw(language, ["get-session", app_name, USER, "no-such-session"])
        assert (code, out) == (1, ""), (language, code, out, err)
        assert 'session "no-such-session" not found' in err, (language, err)


@pytest.mark.parametrize(
    ("stdin", "args", "code", "message"),
    [
        ('{"author": 3}', ["append-event", "app", USER, "s"], 2, "sessionstore-cli: "),
        ('{"author": "user", "nope": 1}', ["append-event", "app", USER, "s"], 2, "nope"),
        ("{}", ["append-event", "app", USER, "s"], 1, "sessionstore-cli: InvalidArgument: "),
        ("", ["drop-session", "app", USER, "s"], 2, "invalid choice: 'drop-session'"),
        ("", ["get-session", "app"], 2, "usage:"),
    ],
)
async def test_the_python_cli_fails_like_the_go_one(
    clis: Clis, server: str, app_name: str, stdin: str, args: list[str], code: int, message: str
):
    async with SessionStoreClient(server, timeout=30) as client:
        created = (await client.create_session(app_name=app_name, user_id=USER)).session
    args = [app_name if a == "app" else created.id if a == "s" else a for a in args]
    got = await clis.run_raw("python", args, stdin.encode())
    assert got[0] == code and got[1] == "" and message in got[2], got
