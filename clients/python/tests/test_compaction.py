"""Event compaction (EventsCompactionConfig) written by a real Runner
round-trips through the store, and ADK builds the same model context from it
as from its own DatabaseSessionService."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.apps._configs import EventsCompactionConfig
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService
from google.adk.sessions.base_session_service import BaseSessionService
from google.genai import types
from test_runner_e2e import ScriptedModel, model_says

from sessionstore_client.adk import GrpcSessionService

USER = "u1"
TURNS = ["one", "two", "three", "four", "five"]


def contents_text(model: ScriptedModel) -> list[list[str]]:
    return [[p.text or "" for c in r.contents for p in c.parts or []] for r in model.requests]


def event_shape(event: Any) -> tuple[Any, ...]:
    compaction = event.actions.compaction
    return (
        event.author,
        event.content.model_dump(exclude_none=True) if event.content else None,
        event.actions.state_delta,
        compaction.compacted_content.model_dump(exclude_none=True) if compaction else None,
    )


async def run(service: BaseSessionService, app_name: str) -> tuple[list[list[str]], Any]:
    agent_model = ScriptedModel(script=[model_says(types.Part(text=f"reply {t}")) for t in TURNS])
    summarizer_model = ScriptedModel(script=[model_says(types.Part(text=f"summary {i}")) for i in range(10)])
    app = App(
        name=app_name,
        root_agent=LlmAgent(name="assistant", model=agent_model, output_key="last_reply"),
        events_compaction_config=EventsCompactionConfig(
            compaction_interval=2, overlap_size=0, summarizer=LlmEventSummarizer(llm=summarizer_model)
        ),
    )
    runner = Runner(app=app, session_service=service)
    session = await service.create_session(app_name=app_name, user_id=USER)
    for text in TURNS:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(user_id=USER, session_id=session.id, new_message=message):
            pass
    await runner.close()
    stored = await service.get_session(app_name=app_name, user_id=USER, session_id=session.id)
    return contents_text(agent_model), stored


@pytest.mark.filterwarnings("ignore:.*EventsCompactionConfig.*experimental:UserWarning")
async def test_compaction_events_round_trip_and_build_the_same_context(
    service: GrpcSessionService, app_name: str, tmp_path: Any
):
    database = DatabaseSessionService(db_url=f"sqlite+aiosqlite:///{tmp_path / 'adk.db'}")
    want_context, want = await run(database, app_name)
    got_context, got = await run(service, app_name)

    compactions = [e for e in got.events if e.actions.compaction]
    assert len(compactions) == 2, [event_shape(e) for e in got.events]
    # The model saw the summaries instead of the compacted turns, exactly as
    # with ADK's own database.
    assert got_context == want_context
    assert any("summary 0" in " ".join(call) for call in got_context)
    assert [event_shape(e) for e in got.events] == [event_shape(e) for e in want.events]
    assert got.state == want.state

    # Exact round trip: the compaction's range is the stored events' own
    # float timestamps, to the last bit.
    first = compactions[0].actions.compaction
    covered = [e for e in got.events if not e.actions.compaction and e.invocation_id]
    assert first.start_timestamp == covered[0].timestamp
    assert first.end_timestamp in [e.timestamp for e in covered]
    again = await GrpcSessionService(client=service.client).get_session(
        app_name=app_name, user_id=USER, session_id=got.id
    )
    assert again == got
    await database.close()
