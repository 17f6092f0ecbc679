import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import empty_pb2 as _empty_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from sessionstore.v1 import event_pb2 as _event_pb2
from sessionstore.v1 import history_pb2 as _history_pb2
from sessionstore.v1 import session_pb2 as _session_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreateSessionRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "session_id", "state", "create_time")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    session_id: str
    state: _struct_pb2.Struct
    create_time: _timestamp_pb2.Timestamp
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., session_id: _Optional[str] = ..., state: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: _session_pb2.Session
    def __init__(self, session: _Optional[_Union[_session_pb2.Session, _Mapping]] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "session_id", "num_recent_events", "after_timestamp", "as_of_seq")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    NUM_RECENT_EVENTS_FIELD_NUMBER: _ClassVar[int]
    AFTER_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    AS_OF_SEQ_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    session_id: str
    num_recent_events: int
    after_timestamp: _timestamp_pb2.Timestamp
    as_of_seq: int
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., session_id: _Optional[str] = ..., num_recent_events: _Optional[int] = ..., after_timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., as_of_seq: _Optional[int] = ...) -> None: ...

class GetSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: _session_pb2.Session
    def __init__(self, session: _Optional[_Union[_session_pb2.Session, _Mapping]] = ...) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "page_size", "page_token", "newest_first")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    NEWEST_FIRST_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    page_size: int
    page_token: str
    newest_first: bool
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., newest_first: _Optional[bool] = ...) -> None: ...

class ListSessionsResponse(_message.Message):
    __slots__ = ("sessions", "next_page_token")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[_session_pb2.Session]
    next_page_token: str
    def __init__(self, sessions: _Optional[_Iterable[_Union[_session_pb2.Session, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DeleteSessionRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "session_id")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    session_id: str
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., session_id: _Optional[str] = ...) -> None: ...

class DeleteSessionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class AppendEventRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "session_id", "event", "expected_revision")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    session_id: str
    event: _event_pb2.Event
    expected_revision: int
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., session_id: _Optional[str] = ..., event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ..., expected_revision: _Optional[int] = ...) -> None: ...

class AppendEventResponse(_message.Message):
    __slots__ = ("event", "revision", "last_update_time", "stored", "duplicate")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    LAST_UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    STORED_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    event: _event_pb2.Event
    revision: int
    last_update_time: _timestamp_pb2.Timestamp
    stored: bool
    duplicate: bool
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ..., revision: _Optional[int] = ..., last_update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., stored: _Optional[bool] = ..., duplicate: _Optional[bool] = ...) -> None: ...

class ListEventsRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "session_id", "page_size", "page_token", "order")
    class Order(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        ORDER_UNSPECIFIED: _ClassVar[ListEventsRequest.Order]
        ORDER_ASCENDING: _ClassVar[ListEventsRequest.Order]
        ORDER_DESCENDING: _ClassVar[ListEventsRequest.Order]
    ORDER_UNSPECIFIED: ListEventsRequest.Order
    ORDER_ASCENDING: ListEventsRequest.Order
    ORDER_DESCENDING: ListEventsRequest.Order
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    session_id: str
    page_size: int
    page_token: str
    order: ListEventsRequest.Order
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., session_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., order: _Optional[_Union[ListEventsRequest.Order, str]] = ...) -> None: ...

class ListEventsResponse(_message.Message):
    __slots__ = ("events", "next_page_token")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_event_pb2.Event]
    next_page_token: str
    def __init__(self, events: _Optional[_Iterable[_Union[_event_pb2.Event, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetUserStateRequest(_message.Message):
    __slots__ = ("app_name", "user_id")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ...) -> None: ...

class GetUserStateResponse(_message.Message):
    __slots__ = ("state",)
    STATE_FIELD_NUMBER: _ClassVar[int]
    state: _struct_pb2.Struct
    def __init__(self, state: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class StreamEventsRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "session_id", "after_seq", "cursor", "from_now", "heartbeat_interval")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    FROM_NOW_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    session_id: str
    after_seq: int
    cursor: str
    from_now: _empty_pb2.Empty
    heartbeat_interval: _duration_pb2.Duration
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., session_id: _Optional[str] = ..., after_seq: _Optional[int] = ..., cursor: _Optional[str] = ..., from_now: _Optional[_Union[_empty_pb2.Empty, _Mapping]] = ..., heartbeat_interval: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class StreamEventsResponse(_message.Message):
    __slots__ = ("event", "caught_up", "heartbeat")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    CAUGHT_UP_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    event: StreamedEvent
    caught_up: CaughtUp
    heartbeat: Heartbeat
    def __init__(self, event: _Optional[_Union[StreamedEvent, _Mapping]] = ..., caught_up: _Optional[_Union[CaughtUp, _Mapping]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ...) -> None: ...

class StreamedEvent(_message.Message):
    __slots__ = ("app_name", "user_id", "session_id", "event", "cursor")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    session_id: str
    event: _event_pb2.Event
    cursor: str
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., session_id: _Optional[str] = ..., event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ..., cursor: _Optional[str] = ...) -> None: ...

class CaughtUp(_message.Message):
    __slots__ = ("cursor",)
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    def __init__(self, cursor: _Optional[str] = ...) -> None: ...

class Heartbeat(_message.Message):
    __slots__ = ("cursor", "time")
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    time: _timestamp_pb2.Timestamp
    def __init__(self, cursor: _Optional[str] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class EraseUserDataRequest(_message.Message):
    __slots__ = ("app_name", "user_id")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ...) -> None: ...

class EraseUserDataResponse(_message.Message):
    __slots__ = ("sessions_deleted", "events_deleted", "memories_deleted")
    SESSIONS_DELETED_FIELD_NUMBER: _ClassVar[int]
    EVENTS_DELETED_FIELD_NUMBER: _ClassVar[int]
    MEMORIES_DELETED_FIELD_NUMBER: _ClassVar[int]
    sessions_deleted: int
    events_deleted: int
    memories_deleted: int
    def __init__(self, sessions_deleted: _Optional[int] = ..., events_deleted: _Optional[int] = ..., memories_deleted: _Optional[int] = ...) -> None: ...
