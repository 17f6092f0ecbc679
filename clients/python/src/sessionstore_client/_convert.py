"""ADK's JSON form of an event <-> sessionstore.v1 messages.

An ADK object is first dumped the way ADK's own DatabaseSessionService stores
it (`model_dump(mode="json", exclude_none=True)`), and read back the way that
service reads it (`model_validate`), so whatever survives ADK's own storage
survives ours. In between, every key with a typed slot in the proto goes
there and every other key goes, unchanged, into the nearest `extra` Struct.
A value only takes a typed slot when the slot can give it back exactly
(proto3 cannot tell "" from unset in a plain string, or [] from unset in a
repeated field); otherwise it stays in `extra`.

Numbers: a Struct holds doubles. Integers within +-2**53 are exact; larger
ones are refused with ValueError rather than silently rounded. On the way
back an integral number within +-2**53 becomes an int, so a float like 3.0
comes back as 3 (equal under ==; pydantic turns it back into a float where a
field is typed float).

Timestamps: float seconds <-> Timestamp(seconds=floor, nanos=round(frac*1e9)),
read back as the float nearest to seconds + nanos / 1e9. That gives back the
very same float for any time from April 1970 on (t >= 2**23, where floats are
at least 2 ns apart) and for any time with at most nine decimals.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Mapping
from typing import Any

from google.protobuf import struct_pb2, timestamp_pb2
from google.protobuf.message import Message

from sessionstore.v1 import event_pb2 as pb

JsonDict = dict[str, Any]

_MAX_EXACT_INT = 2**53
_TEMP_PREFIX = "temp:"


# --- Struct and Timestamp ---------------------------------------------------


def to_struct(data: Mapping[str, Any], path: str = "") -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    for key, value in data.items():
        _set_value(struct.fields[key], value, f"{path}.{key}" if path else key)
    return struct


def _set_value(out: struct_pb2.Value, value: Any, path: str) -> None:
    if value is None:
        out.null_value = struct_pb2.NULL_VALUE
    elif isinstance(value, bool):
        out.bool_value = value
    elif isinstance(value, int):
        if abs(value) > _MAX_EXACT_INT:
            raise ValueError(
                f"{path}: integer {value} is outside +-2**53, which a protobuf Struct "
                "(a double) cannot hold exactly; store it as a string"
            )
        out.number_value = value
    elif isinstance(value, float):
        out.number_value = value
    elif isinstance(value, str):
        out.string_value = value
    elif isinstance(value, Mapping):
        out.struct_value.SetInParent()
        for key, item in value.items():
            _set_value(out.struct_value.fields[key], item, f"{path}.{key}")
    elif isinstance(value, (list, tuple)):
        out.list_value.SetInParent()
        for i, item in enumerate(value):
            _set_value(out.list_value.values.add(), item, f"{path}[{i}]")
    else:
        raise TypeError(f"{path}: {type(value).__name__} is not a JSON value")


def from_struct(struct: struct_pb2.Struct) -> JsonDict:
    return {key: _from_value(value) for key, value in struct.fields.items()}


def _from_value(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "number_value":
        n = value.number_value
        return int(n) if n.is_integer() and abs(n) <= _MAX_EXACT_INT else n
    if kind == "struct_value":
        return from_struct(value.struct_value)
    if kind == "list_value":
        return [_from_value(item) for item in value.list_value.values]
    if kind in ("string_value", "bool_value"):
        return getattr(value, kind)
    return None


def to_timestamp(seconds: float) -> timestamp_pb2.Timestamp:
    whole = math.floor(seconds)
    nanos = round((seconds - whole) * 1e9)
    if nanos == 1_000_000_000:
        whole, nanos = whole + 1, 0
    return timestamp_pb2.Timestamp(seconds=whole, nanos=nanos)


def from_timestamp(ts: timestamp_pb2.Timestamp) -> float:
    # seconds + nanos / 1e9, but as one correctly rounded int division: two
    # float roundings can land one ulp off for times before April 1970.
    return (ts.seconds * 1_000_000_000 + ts.nanos) / 1_000_000_000


# --- scalars ----------------------------------------------------------------
# Readers pop a key from the JSON dict into a message when the slot fits;
# whatever is left in the dict afterwards becomes `extra`.


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text)


def _b64encode(data: bytes) -> str:
    # pydantic's ser_json_bytes="base64" (used by ADK and google-genai) is the
    # URL-safe alphabet with padding.
    return base64.urlsafe_b64encode(data).decode("ascii")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _take_optional(d: JsonDict, key: str, msg: Message, kind: type) -> None:
    """An `optional` scalar: presence is kept, so any value of the type fits."""
    if isinstance(d.get(key), kind):
        setattr(msg, key, d.pop(key))


def _take_plain_str(d: JsonDict, key: str, msg: Message) -> None:
    """A plain proto3 string reads "" as unset, so only non-empty text fits."""
    if isinstance(d.get(key), str) and d[key]:
        setattr(msg, key, d.pop(key))


def _take_struct(d: JsonDict, key: str, msg: Message, *, keep_empty: bool) -> None:
    """keep_empty: the ADK field is Optional, so {} and None differ."""
    value = d.get(key)
    if isinstance(value, dict) and (value or keep_empty):
        getattr(msg, key).CopyFrom(to_struct(value, key))
        del d[key]


def _put_optional(d: JsonDict, msg: Message, *keys: str) -> None:
    for key in keys:
        if msg.HasField(key):
            d[key] = getattr(msg, key)


def _put_struct(d: JsonDict, msg: Message, *keys: str) -> None:
    for key in keys:
        if msg.HasField(key):
            d[key] = from_struct(getattr(msg, key))


def _finish(d: JsonDict, msg: Message) -> Message:
    if d:
        msg.extra.CopyFrom(to_struct(d, "extra"))
    return msg


def _with_extra(d: JsonDict, msg: Message) -> JsonDict:
    if msg.HasField("extra"):
        d.update(from_struct(msg.extra))
    return d


# --- messages without `extra`: taken whole or not at all --------------------

_PLAIN, _OPTIONAL, _BYTES = "plain", "optional", "bytes"
_FLAT_PARTS: dict[str, tuple[type[Message], dict[str, str]]] = {
    "inline_data": (pb.Blob, {"mime_type": _PLAIN, "data": _BYTES, "display_name": _OPTIONAL}),
    "file_data": (pb.FileData, {"mime_type": _PLAIN, "file_uri": _PLAIN, "display_name": _OPTIONAL}),
    "executable_code": (pb.ExecutableCode, {"language": _PLAIN, "code": _PLAIN}),
    "code_execution_result": (pb.CodeExecutionResult, {"outcome": _PLAIN, "output": _OPTIONAL}),
}


def _flat_to_pb(cls: type[Message], spec: dict[str, str], d: Any) -> Message | None:
    if not isinstance(d, dict) or not set(d) <= set(spec):
        return None
    msg = cls()
    for key, value in d.items():
        if not isinstance(value, str) or (spec[key] != _OPTIONAL and not value):
            return None
        setattr(msg, key, _b64decode(value) if spec[key] == _BYTES else value)
    return msg


def _flat_from_pb(spec: dict[str, str], msg: Message) -> JsonDict:
    d: JsonDict = {}
    for key, kind in spec.items():
        if kind == _OPTIONAL:
            _put_optional(d, msg, key)
        elif value := getattr(msg, key):
            d[key] = _b64encode(value) if kind == _BYTES else value
    return d


# --- Content and Part -------------------------------------------------------


def content_to_pb(data: JsonDict) -> pb.Content:
    d = dict(data)
    msg = pb.Content()
    _take_optional(d, "role", msg, str)
    parts = d.get("parts")
    if isinstance(parts, list) and parts and all(isinstance(p, dict) for p in parts):
        msg.parts.extend(_part_to_pb(p) for p in d.pop("parts"))
    return _finish(d, msg)


def content_from_pb(msg: pb.Content) -> JsonDict:
    d: JsonDict = {}
    _put_optional(d, msg, "role")
    if msg.parts:
        d["parts"] = [_part_from_pb(p) for p in msg.parts]
    return _with_extra(d, msg)


def _part_to_pb(data: JsonDict) -> pb.Part:
    d = dict(data)
    msg = pb.Part()
    # `data` is a oneof; a Part with more than one of these keeps the rest in extra.
    if isinstance(d.get("text"), str):
        msg.text = d.pop("text")
    elif isinstance(d.get("function_call"), dict):
        msg.function_call.CopyFrom(_call_to_pb(pb.FunctionCall, "args", d.pop("function_call")))
    elif isinstance(d.get("function_response"), dict):
        msg.function_response.CopyFrom(_call_to_pb(pb.FunctionResponse, "response", d.pop("function_response")))
    else:
        for key, (cls, spec) in _FLAT_PARTS.items():
            if (flat := _flat_to_pb(cls, spec, d.get(key))) is not None:
                getattr(msg, key).CopyFrom(flat)
                del d[key]
                break
    _take_optional(d, "thought", msg, bool)
    if isinstance(d.get("thought_signature"), str):
        msg.thought_signature = _b64decode(d.pop("thought_signature"))
    return _finish(d, msg)


def _part_from_pb(msg: pb.Part) -> JsonDict:
    d: JsonDict = {}
    which = msg.WhichOneof("data")
    if which == "text":
        d["text"] = msg.text
    elif which == "function_call":
        d["function_call"] = _call_from_pb(msg.function_call, "args")
    elif which == "function_response":
        d["function_response"] = _call_from_pb(msg.function_response, "response")
    elif which is not None:
        d[which] = _flat_from_pb(_FLAT_PARTS[which][1], getattr(msg, which))
    _put_optional(d, msg, "thought")
    if msg.HasField("thought_signature"):
        d["thought_signature"] = _b64encode(msg.thought_signature)
    return _with_extra(d, msg)


def _call_to_pb(cls: type[Message], payload: str, data: JsonDict) -> Message:
    d = dict(data)
    msg = cls()
    _take_optional(d, "id", msg, str)
    _take_plain_str(d, "name", msg)
    _take_struct(d, payload, msg, keep_empty=True)
    return _finish(d, msg)


def _call_from_pb(msg: Message, payload: str) -> JsonDict:
    d: JsonDict = {}
    _put_optional(d, msg, "id")
    if msg.name:
        d["name"] = msg.name
    _put_struct(d, msg, payload)
    return _with_extra(d, msg)


# --- EventActions -----------------------------------------------------------

_ACTION_FLAGS = ("escalate", "skip_summarization", "end_of_agent")
_ACTION_TEXTS = ("transfer_to_agent", "rewind_before_invocation_id")
# Fields ADK defaults to {} (not None): empty is the same as unset.
_ACTION_DICTS = ("state_delta", "requested_auth_configs", "requested_tool_confirmations")


def _actions_to_pb(data: JsonDict, drop_temp: bool) -> pb.EventActions:
    d = dict(data)
    msg = pb.EventActions()
    if drop_temp and isinstance(d.get("state_delta"), dict):
        d["state_delta"] = {k: v for k, v in d["state_delta"].items() if not k.startswith(_TEMP_PREFIX)}
    for key in _ACTION_DICTS:
        if d.get(key) == {}:
            del d[key]
        _take_struct(d, key, msg, keep_empty=False)
    _take_struct(d, "agent_state", msg, keep_empty=True)
    artifacts = d.get("artifact_delta")
    if isinstance(artifacts, dict) and all(isinstance(v, int) and not isinstance(v, bool) for v in artifacts.values()):
        msg.artifact_delta.update(d.pop("artifact_delta"))
    for key in _ACTION_FLAGS:
        _take_optional(d, key, msg, bool)
    for key in _ACTION_TEXTS:
        _take_optional(d, key, msg, str)
    compaction = d.get("compaction")
    if (
        isinstance(compaction, dict)
        and set(compaction) == {"start_timestamp", "end_timestamp", "compacted_content"}
        and _is_number(compaction["start_timestamp"])
        and _is_number(compaction["end_timestamp"])
        and isinstance(compaction["compacted_content"], dict)
    ):
        del d["compaction"]
        msg.compaction.start_timestamp.CopyFrom(to_timestamp(compaction["start_timestamp"]))
        msg.compaction.end_timestamp.CopyFrom(to_timestamp(compaction["end_timestamp"]))
        msg.compaction.compacted_content.CopyFrom(content_to_pb(compaction["compacted_content"]))
    return _finish(d, msg)


def _actions_from_pb(msg: pb.EventActions) -> JsonDict:
    d: JsonDict = {}
    _put_struct(d, msg, *_ACTION_DICTS, "agent_state")
    if msg.artifact_delta:
        d["artifact_delta"] = dict(msg.artifact_delta)
    _put_optional(d, msg, *_ACTION_FLAGS, *_ACTION_TEXTS)
    if msg.HasField("compaction"):
        c = msg.compaction
        d["compaction"] = {
            "start_timestamp": from_timestamp(c.start_timestamp),
            "end_timestamp": from_timestamp(c.end_timestamp),
            "compacted_content": content_from_pb(c.compacted_content),
        }
    return _with_extra(d, msg)


# --- Event ------------------------------------------------------------------

_EVENT_FLAGS = ("partial", "turn_complete", "interrupted")
_EVENT_TEXTS = ("branch", "error_code", "error_message", "finish_reason", "model_version")
_EVENT_METADATA = ("custom_metadata", "usage_metadata", "grounding_metadata", "citation_metadata")


def event_to_pb(data: JsonDict, *, drop_temp: bool = False) -> pb.Event:
    """`data` is `Event.model_dump(mode="json", exclude_none=True)`."""
    d = dict(data)
    msg = pb.Event()
    for key in ("id", "invocation_id", "author"):
        # ADK always sets these (as "" at worst), so "" reads back as itself.
        if isinstance(d.get(key), str):
            setattr(msg, key, d.pop(key))
    if _is_number(d.get("timestamp")):
        msg.timestamp.CopyFrom(to_timestamp(d.pop("timestamp")))
    for key in _EVENT_FLAGS:
        _take_optional(d, key, msg, bool)
    for key in _EVENT_TEXTS:
        _take_optional(d, key, msg, str)
    for key in _EVENT_METADATA:
        _take_struct(d, key, msg, keep_empty=True)
    ids = d.get("long_running_tool_ids")
    if isinstance(ids, list) and ids and all(isinstance(i, str) for i in ids):
        msg.long_running_tool_ids.extend(d.pop("long_running_tool_ids"))
    _take_message(d, "content", msg, content_to_pb)
    _take_message(d, "actions", msg, lambda a: _actions_to_pb(a, drop_temp))
    return _finish(d, msg)


def event_from_pb(msg: pb.Event) -> JsonDict:
    d: JsonDict = {"id": msg.id, "invocation_id": msg.invocation_id, "author": msg.author}
    if msg.HasField("timestamp"):
        d["timestamp"] = from_timestamp(msg.timestamp)
    _put_optional(d, msg, *_EVENT_FLAGS, *_EVENT_TEXTS)
    _put_struct(d, msg, *_EVENT_METADATA)
    if msg.long_running_tool_ids:
        d["long_running_tool_ids"] = list(msg.long_running_tool_ids)
    if msg.HasField("content"):
        d["content"] = content_from_pb(msg.content)
    if msg.HasField("actions"):
        d["actions"] = _actions_from_pb(msg.actions)
    return _with_extra(d, msg)


def _take_message(d: JsonDict, key: str, msg: Message, convert: Callable[[JsonDict], Message]) -> None:
    if isinstance(d.get(key), dict):
        getattr(msg, key).CopyFrom(convert(d.pop(key)))
