"""Memories added from Python are found from Go and TypeScript, identically.

Python adds entries (rich content, metadata, namespace, a time) and ingests a
session; each language's CLI searches, prints canonical protobuf JSON, and
the answers are compared with ==, against each other and against what was
written.
"""

from __future__ import annotations

import uuid

from cli_runners import Clis, assert_same
from google.protobuf import json_format, timestamp_pb2

from sessionstore.v1 import event_pb2
from sessionstore.v1 import memory_service_pb2 as mpb
from sessionstore_client import SessionStoreClient
from sessionstore_client._convert import to_struct
from sessionstore_client.memory_client import MemoryClient


async def search_everywhere(clis: Clis, app: str, user: str, query: str) -> dict[str, mpb.SearchMemoryResponse]:
    # Python's answer comes from the client itself; the other two from their CLIs.
    out = {}
    for language in ("typescript", "go"):
        text = await clis.run(language, ["search-memory", app, user, query])
        out[language] = json_format.Parse(text, mpb.SearchMemoryResponse())
    return out


async def test_memories_written_from_python_read_the_same_in_every_language(server: str, clis: Clis, app_name: str):
    user = f"u-{uuid.uuid4().hex[:8]}"
    when = timestamp_pb2.Timestamp(seconds=1_614_834_367, nanos=123_456_789)
    written = mpb.Memory(
        id="fact-1",
        author="user",
        namespace="prefs/travel",
        content=event_pb2.Content(
            role="user",
            parts=[
                event_pb2.Part(text="Grüße: I prefer window seats on trains to Köln 🚆"),
                event_pb2.Part(text="hidden reasoning about seats", thought=True),
            ],
        ),
        custom_metadata=to_struct({"topic": "travel", "score": 0.5, "tags": ["seat", "rail"], "none": None}),
    )
    written.timestamp.CopyFrom(when)
    async with MemoryClient(server) as memory, SessionStoreClient(server) as sessions:
        added = await memory.add_memories(app_name=app_name, user_id=user, memories=[written])
        stored = added.memories[0]
        created = await sessions.create_session(app_name=app_name, user_id=user)
        await sessions.append_event(
            app_name=app_name,
            user_id=user,
            session_id=created.session.id,
            event=event_pb2.Event(
                id="ev-1",
                author="user",
                content=event_pb2.Content(role="user", parts=[event_pb2.Part(text="Seats by the window, always")]),
            ),
        )
        await memory.add_session_to_memory(app_name=app_name, user_id=user, session_id=created.session.id)
        python = await memory.search_memory(app_name=app_name, user_id=user, query="window seats", page_size=10)

    # What was written comes back as written, with server-set fields added.
    for field in ("id", "author", "namespace", "content", "custom_metadata", "timestamp"):
        assert getattr(stored, field) == getattr(written, field), field
    reads = await search_everywhere(clis, app_name, user, "window seats")
    assert set(reads) == {"typescript", "go"}
    assert len(python.results) == 2
    assert {r.memory.event_id for r in python.results} == {"", "ev-1"}
    # Scores carry a recency bonus that moves with the clock between calls;
    # the entries, their order and highlights must match exactly.
    for response in (python, *reads.values()):
        for result in response.results:
            assert result.score > 0
            result.ClearField("score")
            result.ClearField("text_score")
    for language, got in reads.items():
        assert_same(python, got, f"{language}'s SearchMemoryResponse")
    # Another user finds nothing, in every language.
    for language, got in (await search_everywhere(clis, app_name, "someone-else", "window seats")).items():
        assert list(got.results) == [], language
