"""LangGraph on Sessionstore: a checkpointer (`SessionStoreSaver`, on CheckpointService)
and a store (`SessionStoreStore`, on MemoryService), scoped by app and user like sessions.

    graph = builder.compile(
        checkpointer=SessionStoreSaver(target, app_name="support", user_id="u_42"),
        store=SessionStoreStore(target, app_name="support", user_id="u_42"),
    )

Needs the `langgraph` extra: `pip install 'sessionstore-client[langgraph]'`.
"""

from sessionstore_client.langgraph.checkpoint import SessionStoreSaver
from sessionstore_client.langgraph.store import SessionStoreStore

__all__ = ["SessionStoreSaver", "SessionStoreStore"]
