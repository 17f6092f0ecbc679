"""ADK's session-service contract, run against the real server over gRPC."""

from __future__ import annotations

import asyncio
import time

import pytest
from fastapi.openapi.models import APIKey, APIKeyIn
from google.adk.auth.auth_credential import AuthCredential, AuthCredentialTypes
from google.adk.auth.auth_tool import AuthConfig
from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.models.cache_metadata import CacheMetadata
from google.adk.platform import uuid as platform_uuid
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.sessions.session import Session
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.genai import types

import sessionstore_client.adk
from sessionstore_client.adk import GrpcSessionService

USER = "u1"


def text_event(text: str, *, author: str = "user", timestamp: float | None = None, **delta: object) -> Event:
    event = Event(
        invocation_id="inv-1",
        author=author,
        content=types.Content(role="user" if author == "user" else "model", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta=dict(delta)),
    )
    if timestamp is not None:
        event.timestamp = timestamp
    return event


async def reload(service: GrpcSessionService, session: Session, config: GetSessionConfig | None = None) -> Session:
    got = await service.get_session(
        app_name=session.app_name, user_id=session.user_id, session_id=session.id, config=config
    )
    assert got is not None
    return got


# --- create / get -----------------------------------------------------------


async def test_create_returns_merged_state_and_get_returns_the_same_session(service: GrpcSessionService, app_name: str):
    created = await service.create_session(
        app_name=app_name, user_id=USER, state={"app:a": 1, "user:u": "x", "s": [1, 2], "temp:t": True}
    )
    assert created.app_name == app_name and created.user_id == USER and created.id
    assert created.state == {"app:a": 1, "user:u": "x", "s": [1, 2]}
    assert created.events == []
    assert abs(created.last_update_time - time.time()) < 60
    assert await reload(service, created) == created


async def test_create_generates_an_id_when_none_or_empty(service: GrpcSessionService, app_name: str):
    a = await service.create_session(app_name=app_name, user_id=USER)
    b = await service.create_session(app_name=app_name, user_id=USER, session_id="")
    assert a.id and b.id and a.id != b.id


async def test_session_ids_are_stripped_and_blank_ones_generated_as_adk_does(
    service: GrpcSessionService, app_name: str
):
    # ADK's in-memory and SQLite services str.strip() session ids (whitespace
    # and the control characters Python counts as whitespace) and give a
    # blank one a fresh id from ADK's id provider.
    padded = await service.create_session(app_name=app_name, user_id=USER, session_id=" \t\x1f s-1 \n\r")
    assert padded.id == "s-1"
    for same in ("s-1", "  s-1", "s-1\x0b\x0c"):
        got = await service.get_session(app_name=app_name, user_id=USER, session_id=same)
        assert got is not None and got.id == "s-1"
    with pytest.raises(AlreadyExistsError):
        await service.create_session(app_name=app_name, user_id=USER, session_id="\ts-1")
    ids = iter(["fixed-1", "fixed-2"])
    platform_uuid.set_id_provider(lambda: next(ids))
    try:
        assert (await service.create_session(app_name=app_name, user_id=USER)).id == "fixed-1"
        assert (await service.create_session(app_name=app_name, user_id=USER, session_id=" \t\n")).id == "fixed-2"
    finally:
        platform_uuid.reset_id_provider()
    for blank in ("", "   "):
        assert await service.get_session(app_name=app_name, user_id=USER, session_id=blank) is None
        await service.delete_session(app_name=app_name, user_id=USER, session_id=blank)
    await service.delete_session(app_name=app_name, user_id=USER, session_id=" s-1 ")
    assert await service.get_session(app_name=app_name, user_id=USER, session_id="s-1") is None


async def test_create_with_a_taken_id_raises_already_exists(service: GrpcSessionService, app_name: str):
    await service.create_session(app_name=app_name, user_id=USER, session_id="s1")
    with pytest.raises(AlreadyExistsError):
        await service.create_session(app_name=app_name, user_id=USER, session_id="s1")


async def test_racing_creates_of_one_id_yield_one_session(service: GrpcSessionService, app_name: str):
    results = await asyncio.gather(
        *(service.create_session(app_name=app_name, user_id=USER, session_id="same") for _ in range(5)),
        return_exceptions=True,
    )
    assert sum(isinstance(r, Session) for r in results) == 1
    assert all(isinstance(r, (Session, AlreadyExistsError)) for r in results)


async def test_get_missing_or_another_users_session_is_none(service: GrpcSessionService, app_name: str):
    session = await service.create_session(app_name=app_name, user_id=USER)
    assert await service.get_session(app_name=app_name, user_id=USER, session_id="nope") is None
    assert await service.get_session(app_name=app_name, user_id="other", session_id=session.id) is None


# --- state scopes ------------------------------------------------------------


async def test_state_scopes(service: GrpcSessionService, app_name: str):
    s1 = await service.create_session(
        app_name=app_name, user_id="alice", state={"app:color": "red", "user:lang": "en", "mine": 1}
    )
    s2 = await service.create_session(app_name=app_name, user_id="alice")
    s3 = await service.create_session(app_name=app_name, user_id="bob")
    other_app = await service.create_session(app_name=f"{app_name}-other", user_id="alice")

    # app: every user of the app; user: every session of that user; plain: that session only.
    assert (await reload(service, s2)).state == {"app:color": "red", "user:lang": "en"}
    assert (await reload(service, s3)).state == {"app:color": "red"}
    assert (await reload(service, other_app)).state == {}

    await service.append_event(
        s3, text_event("hi", **{"app:color": "blue", "user:lang": "de", "temp:scratch": 1, "mine": 3})
    )
    assert (await reload(service, s1)).state == {"app:color": "blue", "user:lang": "en", "mine": 1}
    assert (await reload(service, s3)).state == {"app:color": "blue", "user:lang": "de", "mine": 3}


async def test_temp_state_is_visible_in_memory_but_never_stored(service: GrpcSessionService, app_name: str):
    session = await service.create_session(app_name=app_name, user_id=USER, state={"temp:init": 1})
    assert "temp:init" not in session.state

    event = text_event("hi", **{"temp:t": "scratch", "kept": 1})
    returned = await service.append_event(session, event)

    # Later steps of the same invocation read it from the in-memory session...
    assert session.state["temp:t"] == "scratch"
    # ...but the event (returned, in memory and stored) and storage never hold it.
    assert returned is event and returned.actions.state_delta == {"kept": 1}
    stored = await reload(service, session)
    assert "temp:t" not in stored.state and stored.state == {"kept": 1}
    assert stored.events[0].actions.state_delta == {"kept": 1}


async def test_state_delta_replaces_values_keeps_none_and_bools(service: GrpcSessionService, app_name: str):
    session = await service.create_session(
        app_name=app_name,
        user_id=USER,
        state={"d": {"a": 1, "b": 2}, "user:d": {"a": 1}, "app:d": {"a": 1}, "gone": 1},
    )
    await service.append_event(
        session,
        text_event(
            "x",
            d={"c": 3},
            **{"user:d": {"c": 3}, "app:d": {"c": 3}},
            gone=None,
            yes=True,
            no=False,
            zero=0,
            half=0.5,
            empty={},
            nested=[{"k": None}],
        ),
    )
    expected = {
        "d": {"c": 3},  # a dict replaces the stored dict: no deep merge
        "user:d": {"c": 3},
        "app:d": {"c": 3},
        "gone": None,  # None is stored, not a deletion
        "yes": True,
        "no": False,
        "zero": 0,
        "half": 0.5,
        "empty": {},
        "nested": [{"k": None}],
    }
    stored = (await reload(service, session)).state
    assert stored == expected
    assert stored["yes"] is True and stored["no"] is False and type(stored["zero"]) is int
    assert session.state == expected  # the in-memory copy agrees with storage


async def test_numbers_in_state(service: GrpcSessionService, app_name: str):
    session = await service.create_session(app_name=app_name, user_id=USER, state={"big": 2**53, "f": 3.0, "x": 1e-7})
    stored = (await reload(service, session)).state
    assert stored == {"big": 2**53, "f": 3, "x": 1e-7}
    assert type(stored["f"]) is int  # integral numbers come back as int (documented)
    with pytest.raises(ValueError, match="2\\*\\*53"):
        await service.create_session(app_name=app_name, user_id=USER, state={"snowflake": 2**53 + 1})


async def test_get_user_state(service: GrpcSessionService, app_name: str):
    assert await service.get_user_state(app_name=app_name, user_id=USER) == {}
    session = await service.create_session(app_name=app_name, user_id=USER, state={"user:a": 1, "app:b": 2, "c": 3})
    await service.create_session(app_name=app_name, user_id="other", state={"user:a": "theirs"})
    await service.append_event(session, text_event("x", **{"user:z": None, "temp:user:t": 1}))
    assert await service.get_user_state(app_name=app_name, user_id=USER) == {"a": 1, "z": None}


# --- get_session windows -----------------------------------------------------


async def test_get_session_event_windows(service: GrpcSessionService, app_name: str):
    session = await service.create_session(app_name=app_name, user_id=USER)
    base = time.time() - 100
    events = [await service.append_event(session, text_event(f"e{i}", timestamp=base + i)) for i in range(5)]

    def ids(s: Session) -> list[str]:
        return [e.id for e in s.events]

    everything = [e.id for e in events]
    assert ids(await reload(service, session)) == everything
    assert ids(await reload(service, session, GetSessionConfig())) == everything
    assert ids(await reload(service, session, GetSessionConfig(num_recent_events=0))) == []
    assert ids(await reload(service, session, GetSessionConfig(num_recent_events=2))) == everything[3:]
    assert ids(await reload(service, session, GetSessionConfig(num_recent_events=99))) == everything
    assert (
        ids(await reload(service, session, GetSessionConfig(after_timestamp=base + 2))) == everything[2:]
    )  # inclusive
    assert ids(await reload(service, session, GetSessionConfig(after_timestamp=base + 2.5))) == everything[3:]
    assert (
        ids(await reload(service, session, GetSessionConfig(num_recent_events=1, after_timestamp=base + 2)))
        == everything[4:]
    )
    assert (
        ids(await reload(service, session, GetSessionConfig(num_recent_events=4, after_timestamp=base + 3)))
        == everything[3:]
    )
    with pytest.raises(ValueError):
        GetSessionConfig(num_recent_events=-1)
    # A window changes events only: state and revision are the session's.
    windowed = await reload(service, session, GetSessionConfig(num_recent_events=0))
    assert windowed.state == session.state and windowed._storage_update_marker == session._storage_update_marker


# --- list / delete ------------------------------------------------------------


async def test_list_sessions_oldest_update_first_without_events(service: GrpcSessionService, app_name: str):
    s1 = await service.create_session(app_name=app_name, user_id=USER, state={"user:u": 1, "k": "s1"})
    s2 = await service.create_session(app_name=app_name, user_id=USER, state={"k": "s2"})
    s3 = await service.create_session(app_name=app_name, user_id=USER)
    await service.create_session(app_name=app_name, user_id="other")
    await service.append_event(s1, text_event("newest"))

    listed = (await service.list_sessions(app_name=app_name, user_id=USER)).sessions
    assert [s.id for s in listed] == [s2.id, s3.id, s1.id]
    assert all(s.events == [] for s in listed)
    assert [s.state for s in listed] == [{"user:u": 1, "k": "s2"}, {"user:u": 1}, {"user:u": 1, "k": "s1"}]
    assert listed[-1].last_update_time == s1.last_update_time
    assert [s.last_update_time for s in listed] == sorted(s.last_update_time for s in listed)
    assert listed[-1] == (await reload(service, s1, GetSessionConfig(num_recent_events=0)))


async def test_list_sessions_without_user_lists_every_user(service: GrpcSessionService, app_name: str):
    a = await service.create_session(app_name=app_name, user_id="alice", state={"user:who": "a"})
    b = await service.create_session(app_name=app_name, user_id="bob", state={"user:who": "b"})
    listed = (await service.list_sessions(app_name=app_name)).sessions
    assert [(s.id, s.user_id, s.state) for s in listed] == [
        (a.id, "alice", {"user:who": "a"}),
        (b.id, "bob", {"user:who": "b"}),
    ]
    assert (await service.list_sessions(app_name=f"{app_name}-none")).sessions == []


async def test_list_sessions_reads_every_page(
    service: GrpcSessionService, app_name: str, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(sessionstore_client.adk, "_LIST_PAGE_SIZE", 2)
    created = [await service.create_session(app_name=app_name, user_id=USER) for _ in range(5)]
    listed = (await service.list_sessions(app_name=app_name, user_id=USER)).sessions
    assert [s.id for s in listed] == [s.id for s in created]


async def test_delete_session_keeps_app_and_user_state(service: GrpcSessionService, app_name: str):
    session = await service.create_session(app_name=app_name, user_id=USER, state={"app:a": 1, "user:u": 2, "s": 3})
    await service.append_event(session, text_event("x"))
    await service.delete_session(app_name=app_name, user_id=USER, session_id=session.id)
    assert await service.get_session(app_name=app_name, user_id=USER, session_id=session.id) is None
    await service.delete_session(app_name=app_name, user_id=USER, session_id=session.id)  # missing: no error
    fresh = await service.create_session(app_name=app_name, user_id=USER)
    assert fresh.state == {"app:a": 1, "user:u": 2}
    # The id is free again, and the new session starts empty.
    again = await service.create_session(app_name=app_name, user_id=USER, session_id=session.id)
    assert again.events == [] and (await reload(service, again)).events == []


# --- append_event ---------------------------------------------------------------


async def test_append_to_an_unknown_session_raises_session_not_found(service: GrpcSessionService, app_name: str):
    never_created = Session(id="nope", app_name=app_name, user_id=USER)
    with pytest.raises(SessionNotFoundError):
        await service.append_event(never_created, text_event("x"))

    deleted = await service.create_session(app_name=app_name, user_id=USER)
    await service.delete_session(app_name=app_name, user_id=USER, session_id=deleted.id)
    with pytest.raises(SessionNotFoundError):
        await service.append_event(deleted, text_event("x"))
    assert deleted.events == []


async def test_stale_writer_is_rejected(service: GrpcSessionService, app_name: str):
    created = await service.create_session(app_name=app_name, user_id=USER)
    first = await reload(service, created)
    second = await reload(service, created)

    await service.append_event(first, text_event("first wins", k="first"))
    with pytest.raises(StaleSessionError, match="modified in storage") as raised:
        await service.append_event(second, text_event("second loses", k="second"))
    assert isinstance(raised.value, ValueError)
    assert second.events == [] and "k" not in second.state  # the stale copy is left as it was

    stored = await reload(service, created)
    assert [e.content.parts[0].text for e in stored.events] == ["first wins"]
    assert stored.state == {"k": "first"}
    # The writer that kept its copy up to date goes on; a reloaded copy does too.
    await service.append_event(first, text_event("again"))
    fresh = await reload(service, created)
    await service.append_event(fresh, text_event("after reload"))
    assert len((await reload(service, created)).events) == 3


async def test_sessions_without_a_revision_marker_use_adks_fallback(service: GrpcSessionService, app_name: str):
    created = await service.create_session(app_name=app_name, user_id=USER)
    by_hand = Session(id=created.id, app_name=app_name, user_id=USER, last_update_time=created.last_update_time)
    await service.append_event(by_hand, text_event("up to date"))
    assert by_hand._storage_update_marker == "1"

    stale = Session(id=created.id, app_name=app_name, user_id=USER, last_update_time=created.last_update_time)
    with pytest.raises(StaleSessionError, match="modified in storage"):
        await service.append_event(stale, text_event("stale"))


async def test_concurrent_appends_through_one_session_object_queue_up(service: GrpcSessionService, app_name: str):
    session = await service.create_session(app_name=app_name, user_id=USER)
    await asyncio.gather(*(service.append_event(session, text_event(f"m{i}", **{f"k{i}": i})) for i in range(8)))
    stored = await reload(service, session)
    assert len(stored.events) == 8 and stored.state == {f"k{i}": i for i in range(8)}
    assert session == stored


async def test_in_memory_session_after_appends_equals_the_stored_one(service: GrpcSessionService, app_name: str):
    session = await service.create_session(app_name=app_name, user_id=USER, state={"user:u": 0})
    for i in range(3):
        await service.append_event(
            session, text_event(f"m{i}", author="agent" if i % 2 else "user", n=i, **{"user:u": i})
        )
    assert session == await reload(service, session)
    assert session._storage_update_marker == "3"


async def test_partial_events_are_not_stored(service: GrpcSessionService, app_name: str):
    session = await service.create_session(app_name=app_name, user_id=USER)
    chunk = text_event("stream chunk", author="agent", k=1)
    chunk.partial = True
    assert await service.append_event(session, chunk) is chunk
    assert session.events == [] and session.state == {} and session._storage_update_marker == "0"
    stored = await reload(service, session)
    assert stored.events == [] and stored.state == {} and stored._storage_update_marker == "0"


async def test_last_update_time_is_the_last_events_time(service: GrpcSessionService, app_name: str):
    session = await service.create_session(app_name=app_name, user_id=USER)
    # Sub-microsecond digits: the float must survive as is, not via datetime.
    event = text_event("x", timestamp=int(time.time()) + 1.123456789)
    await service.append_event(session, event)
    assert session.last_update_time == event.timestamp
    stored = await reload(service, session)
    assert stored.last_update_time == event.timestamp and stored.events[0].timestamp == event.timestamp
    listed = (await service.list_sessions(app_name=app_name, user_id=USER)).sessions
    assert listed[0].last_update_time == event.timestamp


@pytest.mark.xfail(
    strict=True,
    reason="server keeps update times monotonic (max of stored and event time); ADK sets it to the event's time",
)
async def test_last_update_time_follows_a_back_dated_event(service: GrpcSessionService, app_name: str):
    session = await service.create_session(app_name=app_name, user_id=USER)
    event = text_event("x", timestamp=session.last_update_time - 3600)
    await service.append_event(session, event)
    assert (await reload(service, session)).last_update_time == event.timestamp


async def test_retried_append_is_idempotent(service: GrpcSessionService, app_name: str):
    session = await service.create_session(app_name=app_name, user_id=USER)
    copy = await reload(service, session)
    event = text_event("once", k=1)
    await service.append_event(session, event)
    # The same event again (a retry after a lost reply) stores nothing new.
    retry = Event.model_validate(event.model_dump())
    assert await service.append_event(copy, retry) is retry
    assert copy.events == []
    stored = await reload(service, session)
    assert len(stored.events) == 1 and stored._storage_update_marker == "1"
    # Another event under a taken id is refused.
    clash = text_event("different")
    clash.id = event.id
    with pytest.raises(AlreadyExistsError):
        await service.append_event(await reload(service, session), clash)


async def test_bytes_in_content_round_trip(service: GrpcSessionService, app_name: str):
    session = await service.create_session(app_name=app_name, user_id=USER)
    every_byte = bytes(range(256))
    event = Event(
        invocation_id="inv",
        author="user",
        content=types.Content(
            role="user",
            parts=[
                types.Part(
                    inline_data=types.Blob(mime_type="application/octet-stream", data=every_byte, display_name="all")
                ),
                types.Part(inline_data=types.Blob(mime_type="image/png", data=b"")),
                types.Part(text="with a signature", thought_signature=b"\x00\xff\xfe"),
            ],
        ),
    )
    await service.append_event(session, event)
    stored = (await reload(service, session)).events[0]
    assert stored.content.parts[0].inline_data.data == every_byte
    assert stored.content.parts[1].inline_data.data == b""
    assert stored.content.parts[2].thought_signature == b"\x00\xff\xfe"
    assert stored == event


def rich_event() -> Event:
    """Every Event field ADK 2.13 has, set to something other than its default."""
    return Event(
        invocation_id="inv-rich",
        author="root_agent",
        branch="root_agent.sub",
        timestamp=1_767_225_600.987654321,
        partial=False,
        turn_complete=True,
        turn_complete_reason=types.TurnCompleteReason.NEED_MORE_INPUT,
        interrupted=False,
        error_code="",
        error_message="none",
        finish_reason=types.FinishReason.STOP,
        model_version="fake-1",
        custom_metadata={"trace": {"id": "t1", "n": [1, 2.5, None, True]}, "empty": {}},
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=10, candidates_token_count=5, total_token_count=15, thoughts_token_count=0
        ),
        grounding_metadata=types.GroundingMetadata(
            web_search_queries=["q"],
            grounding_chunks=[types.GroundingChunk(web=types.GroundingChunkWeb(uri="https://example.com", title="ex"))],
        ),
        citation_metadata=types.CitationMetadata(
            citations=[types.Citation(start_index=0, end_index=4, uri="https://c")]
        ),
        input_transcription=types.Transcription(text="heard", finished=True),
        output_transcription=types.Transcription(text="said"),
        avg_logprobs=-0.25,
        live_session_id="live-1",
        interaction_id="int-1",
        environment_id="env-1",
        interaction_status=types.InteractionStatus.IDLE,
        go_away=types.LiveServerGoAway(time_left="5s"),
        logprobs_result=types.LogprobsResult(
            chosen_candidates=[types.LogprobsResultCandidate(token="a", log_probability=-0.5)], log_probability_sum=-0.5
        ),
        cache_metadata=CacheMetadata(
            cache_name="projects/p/cachedContents/c",
            expire_time=1_767_229_200.5,
            fingerprint="f",
            invocations_used=1,
            contents_count=2,
        ),
        output={"result": [1, "two"]},
        node_info={"path": "wf/root_agent@1", "output_for": ["wf"], "message_as_output": True},
        isolation_scope="fc-1",
        long_running_tool_ids={"call-2", "call-1"},
        content=types.Content(
            role="model",
            parts=[
                types.Part(text="thinking...", thought=True, thought_signature=b"sig\x00"),
                types.Part(text=""),
                types.Part(function_call=types.FunctionCall(id="call-1", name="lookup", args={"q": "x", "n": 3})),
                types.Part(function_call=types.FunctionCall(name="no_args")),
                types.Part(
                    function_call=types.FunctionCall(id="call-3", name="empty_args", args={}, will_continue=True)
                ),
                types.Part(
                    function_response=types.FunctionResponse(
                        id="call-1",
                        name="lookup",
                        response={"result": {"rows": [1, 2]}},
                        will_continue=False,
                        scheduling=types.FunctionResponseScheduling.WHEN_IDLE,
                        parts=[
                            types.FunctionResponsePart(
                                inline_data=types.FunctionResponseBlob(mime_type="image/png", data=b"\x89PNG")
                            )
                        ],
                    )
                ),
                types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG\r\n", display_name="p.png")),
                types.Part(file_data=types.FileData(mime_type="application/pdf", file_uri="gs://b/f.pdf")),
                types.Part(executable_code=types.ExecutableCode(language=types.Language.PYTHON, code="print(1)")),
                types.Part(
                    executable_code=types.ExecutableCode(language=types.Language.PYTHON, code="print(2)", id="x1")
                ),
                types.Part(
                    code_execution_result=types.CodeExecutionResult(outcome=types.Outcome.OUTCOME_OK, output="1\n")
                ),
                types.Part(text="clip", video_metadata=types.VideoMetadata(fps=2.5, start_offset="1s")),
            ],
        ),
        actions=EventActions(
            skip_summarization=True,
            state_delta={"k": {"nested": [1, None]}, "user:u": False, "app:a": 0.5, "temp:dropped": 1},
            artifact_delta={"report.pdf": 2, "img.png": 0},
            transfer_to_agent="helper",
            transfer_reason="needs help",
            escalate=False,
            requested_tool_confirmations={
                "call-1": ToolConfirmation(hint="ok?", confirmed=False, payload={"amount": 10})
            },
            compaction=EventCompaction(
                start_timestamp=1_767_225_000.5,
                end_timestamp=1_767_225_500.25,
                compacted_content=types.Content(role="model", parts=[types.Part(text="summary")]),
            ),
            end_of_agent=True,
            agent_state={"step": 2},
            rewind_before_invocation_id="inv-0",
            route=["a", 1, True],
            set_model_response={"answer": 42},
        ),
    )


async def test_rich_event_round_trips_exactly(service: GrpcSessionService, app_name: str):
    session = await service.create_session(app_name=app_name, user_id=USER)
    event = rich_event()
    returned = await service.append_event(session, event)
    assert "temp:dropped" not in returned.actions.state_delta

    stored = await reload(service, session)
    assert stored.events == [event]
    assert stored.events[0].long_running_tool_ids == {"call-1", "call-2"}
    assert stored.events[0].content.parts[5].function_response.parts[0].inline_data.data == b"\x89PNG"
    assert stored.events == session.events
    assert stored.state == {k: v for k, v in session.state.items() if not k.startswith("temp:")}


async def test_auth_configs_come_back_as_adks_own_storage_returns_them(service: GrpcSessionService, app_name: str):
    # ADK's JSON form of an AuthConfig is lossy by design (it redacts the scheme
    # and drops secrets), so the reference is DatabaseSessionService's round trip.
    session = await service.create_session(app_name=app_name, user_id=USER)
    event = text_event("needs auth", author="agent")
    event.actions.requested_auth_configs = {
        "call-1": AuthConfig(
            auth_scheme=APIKey(**{"in": APIKeyIn.header}, name="X-Key"),
            raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key="k"),
        )
    }
    await service.append_event(session, event)
    as_adk_stores_it = Event.model_validate(event.model_dump(mode="json", exclude_none=True))
    assert (await reload(service, session)).events == [as_adk_stores_it]
