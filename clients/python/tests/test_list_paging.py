"""list_sessions: ADK's own signature, plus the store's paging as keyword extensions."""

from __future__ import annotations

import inspect

from google.adk.sessions.base_session_service import BaseSessionService

from sessionstore_client.adk import GrpcSessionService, PagedListSessionsResponse

USER = "u1"


def test_the_adapter_takes_every_list_sessions_parameter_of_the_installed_adk():
    ours = inspect.signature(GrpcSessionService.list_sessions).parameters
    theirs = inspect.signature(BaseSessionService.list_sessions).parameters
    assert set(theirs) <= set(ours)
    for name, param in theirs.items():
        assert ours[name].kind == param.kind and ours[name].default == param.default, name


async def test_pages_through_sessions_in_adks_order(service: GrpcSessionService, app_name: str):
    created = [await service.create_session(app_name=app_name, user_id=USER) for _ in range(5)]
    everything = await service.list_sessions(app_name=app_name, user_id=USER)
    assert type(everything).__name__ == "ListSessionsResponse"
    pages: list[list[str]] = []
    token = ""
    while True:
        page = await service.list_sessions(app_name=app_name, user_id=USER, page_size=2, page_token=token)
        assert isinstance(page, PagedListSessionsResponse)
        pages.append([s.id for s in page.sessions])
        token = page.next_page_token
        if not token:
            break
    assert pages == [[s.id for s in created[:2]], [s.id for s in created[2:4]], [created[4].id]]
    assert [s for p in pages for s in p] == [s.id for s in everything.sessions]
    everyone = await service.list_sessions(app_name=app_name, page_size=10)
    assert [s.id for s in everyone.sessions] == [s.id for s in created] and everyone.next_page_token == ""
