"""LangGraph's own checkpointer conformance suite (langgraph-checkpoint-conformance)
against SessionStoreSaver on the real server: its async API as it is, and its
blocking API through an adapter that runs each blocking call in a thread."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import Capability
from langgraph.checkpoint.conformance.report import ProgressCallbacks

from sessionstore_client.langgraph import SessionStoreSaver


class BlockingThroughThreads(SessionStoreSaver):
    """The async methods the suite calls, each answered by the blocking one."""

    async def aput(self, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(self.put, *args, **kwargs)

    async def aput_writes(self, *args: Any, **kwargs: Any) -> None:
        await asyncio.to_thread(self.put_writes, *args, **kwargs)

    async def aget_tuple(self, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(self.get_tuple, *args, **kwargs)

    async def alist(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        for item in await asyncio.to_thread(lambda: list(self.list(*args, **kwargs))):
            yield item

    async def adelete_thread(self, *args: Any, **kwargs: Any) -> None:
        await asyncio.to_thread(self.delete_thread, *args, **kwargs)

    async def acopy_thread(self, *args: Any, **kwargs: Any) -> None:
        await asyncio.to_thread(self.copy_thread, *args, **kwargs)

    async def adelete_for_runs(self, *args: Any, **kwargs: Any) -> None:
        await asyncio.to_thread(self.delete_for_runs, *args, **kwargs)

    async def aprune(self, *args: Any, **kwargs: Any) -> None:
        await asyncio.to_thread(self.prune, *args, **kwargs)


@pytest.mark.parametrize("saver_class", [SessionStoreSaver, BlockingThroughThreads], ids=["async", "blocking"])
async def test_conformance_in_full(server: str, app_name: str, saver_class: type[SessionStoreSaver]) -> None:
    # The suite expects an empty store for each capability (it lists every
    # thread): each saver gets a user of its own, and users never see each
    # other's threads.
    async def factory() -> AsyncIterator[SessionStoreSaver]:
        saver = saver_class(server, app_name=app_name, user_id=f"conformance-{uuid.uuid4().hex[:8]}")
        try:
            yield saver
        finally:
            saver.close()
            await saver.aclose()

    registered = checkpointer_test(name=f"SessionStoreSaver-{saver_class.__name__}")(factory)
    report = await validate(registered, progress=ProgressCallbacks.verbose())
    report.print_report()
    # Every capability, the optional ones included, is detected and passes: nothing skipped.
    assert sorted(report.results) == sorted(c.value for c in Capability)
    for name, result in report.results.items():
        assert result.detected, f"{name} was not detected"
        assert result.passed is True, f"{name}: {result.failures}"
        assert result.tests_skipped == 0, f"{name} skipped {result.tests_skipped}"
    assert report.conformance_level() == "FULL"
