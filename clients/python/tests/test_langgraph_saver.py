"""What the conformance suite does not cover: users, paging and the token."""

from __future__ import annotations

import uuid

from langgraph.checkpoint.conformance.test_utils import generate_checkpoint, generate_metadata

from sessionstore_client.langgraph import SessionStoreSaver


def put(saver: SessionStoreSaver, thread_id: str, parent: dict | None = None, **configurable: str) -> dict:
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", **configurable}}
    if parent:
        config["configurable"]["checkpoint_id"] = parent["configurable"]["checkpoint_id"]
    return saver.put(
        config, generate_checkpoint(channel_values={"k": "v"}, channel_versions={"k": 1}), generate_metadata(), {"k": 1}
    )


def test_threads_belong_to_a_user(server: str, app_name: str) -> None:
    alice = SessionStoreSaver(server, app_name=app_name, user_id="alice")
    bob = SessionStoreSaver(server, app_name=app_name, user_id="bob")
    try:
        put(alice, "t1")
        assert alice.get_tuple({"configurable": {"thread_id": "t1"}}) is not None
        assert bob.get_tuple({"configurable": {"thread_id": "t1"}}) is None
        assert list(bob.list(None)) == []
        # A call's configurable.user_id picks the user.
        put(bob, "t2", user_id="alice")
        assert {t.config["configurable"]["thread_id"] for t in alice.list(None)} == {"t1", "t2"}
        assert bob.get_tuple({"configurable": {"thread_id": "t2", "user_id": "alice"}}) is not None
        bob.delete_thread("t1")  # bob's t1: there is none; alice's stays
        assert alice.get_tuple({"configurable": {"thread_id": "t1"}}) is not None
    finally:
        alice.close()
        bob.close()


def test_list_pages_through_long_threads(server: str, app_name: str) -> None:
    saver = SessionStoreSaver(server, app_name=app_name, user_id=f"u-{uuid.uuid4().hex[:6]}")
    try:
        config = None
        ids = []
        for _ in range(120):
            config = put(saver, "long", parent=config)
            ids.append(config["configurable"]["checkpoint_id"])
        listed = [
            t.config["configurable"]["checkpoint_id"] for t in saver.list({"configurable": {"thread_id": "long"}})
        ]
        assert listed == ids[::-1]
        assert len(list(saver.list(None, limit=70))) == 70
        before = {"configurable": {"checkpoint_id": ids[60]}}
        assert [t.config["configurable"]["checkpoint_id"] for t in saver.list(None, before=before, limit=3)] == ids[
            59:56:-1
        ]
        parent = saver.get_tuple({"configurable": {"thread_id": "long"}}).parent_config
        assert parent is not None and parent["configurable"]["checkpoint_id"] == ids[-2]
    finally:
        saver.close()
