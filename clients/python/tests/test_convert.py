"""The mapping between ADK's JSON form and the proto, without a server."""

from __future__ import annotations

import random

import pytest
from google.adk.events.event import Event
from google.genai import types

from sessionstore_client import _convert


def test_float_times_survive_the_timestamp_round_trip():
    rng = random.Random(7)
    times = [rng.uniform(2**23, 2**35) for _ in range(20_000)]  # April 1970 onwards
    times += [round(rng.uniform(0, 2**35), rng.randint(0, 9)) for _ in range(20_000)]  # <= 9 decimals
    times += [0.0, 1.5, -1.5, 1_767_225_600.987654321, 253_402_300_799.999]
    for t in times:
        assert _convert.from_timestamp(_convert.to_timestamp(t)) == t, t


def test_nanos_carry_into_the_next_second():
    ts = _convert.to_timestamp(0.9999999999)
    assert (ts.seconds, ts.nanos) == (1, 0)


def test_struct_numbers():
    struct = _convert.to_struct(
        {"i": 2**53, "neg": -(2**53), "f": 2.0, "x": 0.1, "b": True, "n": None, "l": [1, [2.5]]}
    )
    assert _convert.from_struct(struct) == {
        "i": 2**53,
        "neg": -(2**53),
        "f": 2,
        "x": 0.1,
        "b": True,
        "n": None,
        "l": [1, [2.5]],
    }
    for too_big in (2**53 + 1, -(2**53) - 1):
        with pytest.raises(ValueError, match=r"state\.k\[0\]: integer"):
            _convert.to_struct({"k": [too_big]}, "state")


def test_fields_without_a_typed_slot_go_to_the_nearest_extra():
    event = Event(
        author="a",
        long_running_tool_ids=set(),
        content=types.Content(
            parts=[
                types.Part(function_call=types.FunctionCall(name="", args={}, will_continue=True)),
                types.Part(code_execution_result=types.CodeExecutionResult(outcome=types.Outcome.OUTCOME_OK, id="r1")),
            ]
        ),
    )
    message = _convert.event_to_pb(event.model_dump(mode="json", exclude_none=True))
    call = message.content.parts[0].function_call
    assert call.name == "" and _convert.from_struct(call.extra) == {"name": "", "will_continue": True}
    assert call.HasField("args")  # {} is kept apart from unset
    assert message.content.parts[1].WhichOneof("data") is None
    assert _convert.from_struct(message.content.parts[1].extra) == {
        "code_execution_result": {"outcome": "OUTCOME_OK", "id": "r1"}
    }
    assert _convert.from_struct(message.extra) == {"long_running_tool_ids": [], "node_info": {"path": ""}}
    assert Event.model_validate(_convert.event_from_pb(message)) == event
