import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from sessionstore.v1 import event_pb2 as _event_pb2
from sessionstore.v1 import session_pb2 as _session_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ForkSessionRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "session_id", "up_to_seq", "new_session_id")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    UP_TO_SEQ_FIELD_NUMBER: _ClassVar[int]
    NEW_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    session_id: str
    up_to_seq: int
    new_session_id: str
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., session_id: _Optional[str] = ..., up_to_seq: _Optional[int] = ..., new_session_id: _Optional[str] = ...) -> None: ...

class ForkSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: _session_pb2.Session
    def __init__(self, session: _Optional[_Union[_session_pb2.Session, _Mapping]] = ...) -> None: ...

class RewindSessionRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "session_id", "rewind_before_invocation_id", "expected_revision")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REWIND_BEFORE_INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    session_id: str
    rewind_before_invocation_id: str
    expected_revision: int
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., session_id: _Optional[str] = ..., rewind_before_invocation_id: _Optional[str] = ..., expected_revision: _Optional[int] = ...) -> None: ...

class RewindSessionResponse(_message.Message):
    __slots__ = ("event", "revision", "last_update_time")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    LAST_UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    event: _event_pb2.Event
    revision: int
    last_update_time: _timestamp_pb2.Timestamp
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ..., revision: _Optional[int] = ..., last_update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...
