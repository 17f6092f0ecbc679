"""A small LangGraph agent for the end-to-end test, run as its own process per
phase so that nothing survives between phases but what the server stored.

    python langgraph_agent.py PHASE TARGET APP USER THREAD [CHECKPOINT_ID]

Prints one JSON object with what the phase observed.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Annotated, Any, TypedDict

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt

from sessionstore_client.langgraph import SessionStoreSaver


class FakeOrderModel(BaseChatModel):
    """Answers from the conversation alone, so every process answers alike:
    asks for the order tool first, then reports what the tool said."""

    @property
    def _llm_type(self) -> str:
        return "fake-order-model"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply = AIMessage(content=f"Order status: {last.content}")
        elif isinstance(last, AIMessage):
            reply = AIMessage(content="The request was not approved.")
        else:
            reply = AIMessage(
                content="",
                tool_calls=[
                    {"name": "lookup_order", "args": {"order_id": "8842"}, "id": "call-1", "type": "tool_call"}
                ],
            )
        return ChatResult(generations=[ChatGeneration(message=reply)])


@tool
def lookup_order(order_id: str) -> str:
    """Looks an order up."""
    return f"order {order_id} ships tomorrow"


class State(TypedDict):
    messages: Annotated[list[BaseMessage], add_messages]
    approved: bool


def agent(state: State) -> dict[str, Any]:
    return {"messages": [FakeOrderModel().invoke(state["messages"])]}


def review(state: State) -> Command[Any]:
    # Human in the loop: the run stops here until someone answers.
    decision = interrupt({"question": "run lookup_order?", "call": state["messages"][-1].tool_calls[0]["args"]})
    if decision == "approve":
        return Command(goto="tools", update={"approved": True})
    return Command(goto="agent", update={"approved": False, "messages": [AIMessage(content="Denied by reviewer.")]})


def route(state: State) -> str:
    last = state["messages"][-1]
    return "review" if isinstance(last, AIMessage) and last.tool_calls else END


def build(saver: SessionStoreSaver) -> Any:
    g = StateGraph(State)
    g.add_node("agent", agent)
    g.add_node("review", review)
    g.add_node("tools", ToolNode([lookup_order]))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", route, ["review", END])
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=saver)


def summary(snapshot: Any) -> dict[str, Any]:
    return {
        "next": list(snapshot.next),
        "checkpoint_id": snapshot.config["configurable"]["checkpoint_id"],
        "messages": [str(m.content) for m in snapshot.values.get("messages", [])],
        "interrupts": [i.value for t in snapshot.tasks for i in t.interrupts],
        "approved": snapshot.values.get("approved"),
    }


async def main(phase: str, target: str, app: str, user: str, thread: str, checkpoint_id: str | None) -> dict[str, Any]:
    saver = SessionStoreSaver(target, app_name=app, user_id=user)
    graph = build(saver)
    config: dict[str, Any] = {"configurable": {"thread_id": thread}}
    try:
        if phase == "start":
            # Async API.
            await graph.ainvoke({"messages": [HumanMessage(content="Where is order 8842?")]}, config)
            return summary(await graph.aget_state(config))
        if phase == "resume":
            # Blocking API, in a process that never saw the first one.
            before = summary(graph.get_state(config))
            graph.invoke(Command(resume="approve"), config)
            history = [summary(s) for s in graph.get_state_history(config)]
            return {"before": before, "after": summary(graph.get_state(config)), "history": history}
        if phase == "fork":
            # From a past checkpoint: a branch where the reviewer says no.
            past = {"configurable": {"thread_id": thread, "checkpoint_id": checkpoint_id}}
            replayed = summary(graph.get_state(past))
            fork = await graph.aupdate_state(past, {"approved": False}, as_node="agent")
            forked = summary(await graph.aget_state(fork))
            await graph.ainvoke(Command(resume="deny"), fork)
            history = [summary(s) async for s in graph.aget_state_history(config)]
            return {
                "replayed": replayed,
                "fork": forked,
                "after": summary(await graph.aget_state(config)),
                "history": history,
            }
        raise SystemExit(f"unknown phase {phase}")
    finally:
        saver.close()
        await saver.aclose()


if __name__ == "__main__":
    phase, target, app, user, thread, *rest = sys.argv[1:]
    print(json.dumps(asyncio.run(main(phase, target, app, user, thread, rest[0] if rest else None))))
