import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Event(_message.Message):
    __slots__ = ("id", "seq", "invocation_id", "author", "branch", "timestamp", "partial", "turn_complete", "content", "actions", "long_running_tool_ids", "interrupted", "error_code", "error_message", "finish_reason", "model_version", "custom_metadata", "usage_metadata", "grounding_metadata", "citation_metadata", "extra")
    ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_FIELD_NUMBER: _ClassVar[int]
    TURN_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    LONG_RUNNING_TOOL_IDS_FIELD_NUMBER: _ClassVar[int]
    INTERRUPTED_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    MODEL_VERSION_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_METADATA_FIELD_NUMBER: _ClassVar[int]
    USAGE_METADATA_FIELD_NUMBER: _ClassVar[int]
    GROUNDING_METADATA_FIELD_NUMBER: _ClassVar[int]
    CITATION_METADATA_FIELD_NUMBER: _ClassVar[int]
    EXTRA_FIELD_NUMBER: _ClassVar[int]
    id: str
    seq: int
    invocation_id: str
    author: str
    branch: str
    timestamp: _timestamp_pb2.Timestamp
    partial: bool
    turn_complete: bool
    content: Content
    actions: EventActions
    long_running_tool_ids: _containers.RepeatedScalarFieldContainer[str]
    interrupted: bool
    error_code: str
    error_message: str
    finish_reason: str
    model_version: str
    custom_metadata: _struct_pb2.Struct
    usage_metadata: _struct_pb2.Struct
    grounding_metadata: _struct_pb2.Struct
    citation_metadata: _struct_pb2.Struct
    extra: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., seq: _Optional[int] = ..., invocation_id: _Optional[str] = ..., author: _Optional[str] = ..., branch: _Optional[str] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., partial: _Optional[bool] = ..., turn_complete: _Optional[bool] = ..., content: _Optional[_Union[Content, _Mapping]] = ..., actions: _Optional[_Union[EventActions, _Mapping]] = ..., long_running_tool_ids: _Optional[_Iterable[str]] = ..., interrupted: _Optional[bool] = ..., error_code: _Optional[str] = ..., error_message: _Optional[str] = ..., finish_reason: _Optional[str] = ..., model_version: _Optional[str] = ..., custom_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., usage_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., grounding_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., citation_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., extra: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Content(_message.Message):
    __slots__ = ("role", "parts", "extra")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    EXTRA_FIELD_NUMBER: _ClassVar[int]
    role: str
    parts: _containers.RepeatedCompositeFieldContainer[Part]
    extra: _struct_pb2.Struct
    def __init__(self, role: _Optional[str] = ..., parts: _Optional[_Iterable[_Union[Part, _Mapping]]] = ..., extra: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Part(_message.Message):
    __slots__ = ("text", "function_call", "function_response", "inline_data", "file_data", "executable_code", "code_execution_result", "thought", "thought_signature", "extra")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    FUNCTION_CALL_FIELD_NUMBER: _ClassVar[int]
    FUNCTION_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    INLINE_DATA_FIELD_NUMBER: _ClassVar[int]
    FILE_DATA_FIELD_NUMBER: _ClassVar[int]
    EXECUTABLE_CODE_FIELD_NUMBER: _ClassVar[int]
    CODE_EXECUTION_RESULT_FIELD_NUMBER: _ClassVar[int]
    THOUGHT_FIELD_NUMBER: _ClassVar[int]
    THOUGHT_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    EXTRA_FIELD_NUMBER: _ClassVar[int]
    text: str
    function_call: FunctionCall
    function_response: FunctionResponse
    inline_data: Blob
    file_data: FileData
    executable_code: ExecutableCode
    code_execution_result: CodeExecutionResult
    thought: bool
    thought_signature: bytes
    extra: _struct_pb2.Struct
    def __init__(self, text: _Optional[str] = ..., function_call: _Optional[_Union[FunctionCall, _Mapping]] = ..., function_response: _Optional[_Union[FunctionResponse, _Mapping]] = ..., inline_data: _Optional[_Union[Blob, _Mapping]] = ..., file_data: _Optional[_Union[FileData, _Mapping]] = ..., executable_code: _Optional[_Union[ExecutableCode, _Mapping]] = ..., code_execution_result: _Optional[_Union[CodeExecutionResult, _Mapping]] = ..., thought: _Optional[bool] = ..., thought_signature: _Optional[bytes] = ..., extra: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class FunctionCall(_message.Message):
    __slots__ = ("id", "name", "args", "extra")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    EXTRA_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    args: _struct_pb2.Struct
    extra: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., extra: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class FunctionResponse(_message.Message):
    __slots__ = ("id", "name", "response", "extra")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    EXTRA_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    response: _struct_pb2.Struct
    extra: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., response: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., extra: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Blob(_message.Message):
    __slots__ = ("mime_type", "data", "display_name")
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    mime_type: str
    data: bytes
    display_name: str
    def __init__(self, mime_type: _Optional[str] = ..., data: _Optional[bytes] = ..., display_name: _Optional[str] = ...) -> None: ...

class FileData(_message.Message):
    __slots__ = ("mime_type", "file_uri", "display_name")
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    FILE_URI_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    mime_type: str
    file_uri: str
    display_name: str
    def __init__(self, mime_type: _Optional[str] = ..., file_uri: _Optional[str] = ..., display_name: _Optional[str] = ...) -> None: ...

class ExecutableCode(_message.Message):
    __slots__ = ("language", "code")
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    language: str
    code: str
    def __init__(self, language: _Optional[str] = ..., code: _Optional[str] = ...) -> None: ...

class CodeExecutionResult(_message.Message):
    __slots__ = ("outcome", "output")
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    outcome: str
    output: str
    def __init__(self, outcome: _Optional[str] = ..., output: _Optional[str] = ...) -> None: ...

class EventActions(_message.Message):
    __slots__ = ("state_delta", "artifact_delta", "transfer_to_agent", "escalate", "skip_summarization", "requested_auth_configs", "requested_tool_confirmations", "compaction", "end_of_agent", "agent_state", "rewind_before_invocation_id", "extra")
    class ArtifactDeltaEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    STATE_DELTA_FIELD_NUMBER: _ClassVar[int]
    ARTIFACT_DELTA_FIELD_NUMBER: _ClassVar[int]
    TRANSFER_TO_AGENT_FIELD_NUMBER: _ClassVar[int]
    ESCALATE_FIELD_NUMBER: _ClassVar[int]
    SKIP_SUMMARIZATION_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_AUTH_CONFIGS_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_TOOL_CONFIRMATIONS_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_FIELD_NUMBER: _ClassVar[int]
    END_OF_AGENT_FIELD_NUMBER: _ClassVar[int]
    AGENT_STATE_FIELD_NUMBER: _ClassVar[int]
    REWIND_BEFORE_INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    EXTRA_FIELD_NUMBER: _ClassVar[int]
    state_delta: _struct_pb2.Struct
    artifact_delta: _containers.ScalarMap[str, int]
    transfer_to_agent: str
    escalate: bool
    skip_summarization: bool
    requested_auth_configs: _struct_pb2.Struct
    requested_tool_confirmations: _struct_pb2.Struct
    compaction: EventCompaction
    end_of_agent: bool
    agent_state: _struct_pb2.Struct
    rewind_before_invocation_id: str
    extra: _struct_pb2.Struct
    def __init__(self, state_delta: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., artifact_delta: _Optional[_Mapping[str, int]] = ..., transfer_to_agent: _Optional[str] = ..., escalate: _Optional[bool] = ..., skip_summarization: _Optional[bool] = ..., requested_auth_configs: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., requested_tool_confirmations: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., compaction: _Optional[_Union[EventCompaction, _Mapping]] = ..., end_of_agent: _Optional[bool] = ..., agent_state: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., rewind_before_invocation_id: _Optional[str] = ..., extra: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class EventCompaction(_message.Message):
    __slots__ = ("start_timestamp", "end_timestamp", "compacted_content")
    START_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    END_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    COMPACTED_CONTENT_FIELD_NUMBER: _ClassVar[int]
    start_timestamp: _timestamp_pb2.Timestamp
    end_timestamp: _timestamp_pb2.Timestamp
    compacted_content: Content
    def __init__(self, start_timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., compacted_content: _Optional[_Union[Content, _Mapping]] = ...) -> None: ...
