import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from sessionstore.v1 import event_pb2 as _event_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Memory(_message.Message):
    __slots__ = ("id", "app_name", "user_id", "content", "author", "timestamp", "custom_metadata", "session_id", "event_id", "namespace", "create_time", "expire_time", "embedding", "has_embedding")
    ID_FIELD_NUMBER: _ClassVar[int]
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_METADATA_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    HAS_EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    id: str
    app_name: str
    user_id: str
    content: _event_pb2.Content
    author: str
    timestamp: _timestamp_pb2.Timestamp
    custom_metadata: _struct_pb2.Struct
    session_id: str
    event_id: str
    namespace: str
    create_time: _timestamp_pb2.Timestamp
    expire_time: _timestamp_pb2.Timestamp
    embedding: _containers.RepeatedScalarFieldContainer[float]
    has_embedding: bool
    def __init__(self, id: _Optional[str] = ..., app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., content: _Optional[_Union[_event_pb2.Content, _Mapping]] = ..., author: _Optional[str] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., custom_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., session_id: _Optional[str] = ..., event_id: _Optional[str] = ..., namespace: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., expire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., embedding: _Optional[_Iterable[float]] = ..., has_embedding: _Optional[bool] = ...) -> None: ...

class AddSessionToMemoryRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "session_id", "custom_metadata")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_METADATA_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    session_id: str
    custom_metadata: _struct_pb2.Struct
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., session_id: _Optional[str] = ..., custom_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class AddSessionToMemoryResponse(_message.Message):
    __slots__ = ("memories_added", "events_read")
    MEMORIES_ADDED_FIELD_NUMBER: _ClassVar[int]
    EVENTS_READ_FIELD_NUMBER: _ClassVar[int]
    memories_added: int
    events_read: int
    def __init__(self, memories_added: _Optional[int] = ..., events_read: _Optional[int] = ...) -> None: ...

class AddEventsToMemoryRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "session_id", "events", "custom_metadata")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_METADATA_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    session_id: str
    events: _containers.RepeatedCompositeFieldContainer[_event_pb2.Event]
    custom_metadata: _struct_pb2.Struct
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., session_id: _Optional[str] = ..., events: _Optional[_Iterable[_Union[_event_pb2.Event, _Mapping]]] = ..., custom_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class AddEventsToMemoryResponse(_message.Message):
    __slots__ = ("memories_added", "memory_ids")
    MEMORIES_ADDED_FIELD_NUMBER: _ClassVar[int]
    MEMORY_IDS_FIELD_NUMBER: _ClassVar[int]
    memories_added: int
    memory_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, memories_added: _Optional[int] = ..., memory_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class AddMemoriesRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "memories", "custom_metadata")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_METADATA_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    memories: _containers.RepeatedCompositeFieldContainer[Memory]
    custom_metadata: _struct_pb2.Struct
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., memories: _Optional[_Iterable[_Union[Memory, _Mapping]]] = ..., custom_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class AddMemoriesResponse(_message.Message):
    __slots__ = ("memories",)
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    memories: _containers.RepeatedCompositeFieldContainer[Memory]
    def __init__(self, memories: _Optional[_Iterable[_Union[Memory, _Mapping]]] = ...) -> None: ...

class MemoryFilter(_message.Message):
    __slots__ = ("authors", "start_time", "end_time", "metadata", "session_ids", "namespace_prefix")
    AUTHORS_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SESSION_IDS_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_PREFIX_FIELD_NUMBER: _ClassVar[int]
    authors: _containers.RepeatedScalarFieldContainer[str]
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    metadata: _struct_pb2.Struct
    session_ids: _containers.RepeatedScalarFieldContainer[str]
    namespace_prefix: str
    def __init__(self, authors: _Optional[_Iterable[str]] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., session_ids: _Optional[_Iterable[str]] = ..., namespace_prefix: _Optional[str] = ...) -> None: ...

class SearchMemoryRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "query", "page_size", "filter", "query_embedding", "mode")
    class QueryMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        QUERY_MODE_UNSPECIFIED: _ClassVar[SearchMemoryRequest.QueryMode]
        QUERY_MODE_ANY: _ClassVar[SearchMemoryRequest.QueryMode]
        QUERY_MODE_WEBSEARCH: _ClassVar[SearchMemoryRequest.QueryMode]
    QUERY_MODE_UNSPECIFIED: SearchMemoryRequest.QueryMode
    QUERY_MODE_ANY: SearchMemoryRequest.QueryMode
    QUERY_MODE_WEBSEARCH: SearchMemoryRequest.QueryMode
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    QUERY_EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    query: str
    page_size: int
    filter: MemoryFilter
    query_embedding: _containers.RepeatedScalarFieldContainer[float]
    mode: SearchMemoryRequest.QueryMode
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., query: _Optional[str] = ..., page_size: _Optional[int] = ..., filter: _Optional[_Union[MemoryFilter, _Mapping]] = ..., query_embedding: _Optional[_Iterable[float]] = ..., mode: _Optional[_Union[SearchMemoryRequest.QueryMode, str]] = ...) -> None: ...

class SearchMemoryResult(_message.Message):
    __slots__ = ("memory", "score", "highlight", "text_score", "vector_distance")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    HIGHLIGHT_FIELD_NUMBER: _ClassVar[int]
    TEXT_SCORE_FIELD_NUMBER: _ClassVar[int]
    VECTOR_DISTANCE_FIELD_NUMBER: _ClassVar[int]
    memory: Memory
    score: float
    highlight: str
    text_score: float
    vector_distance: float
    def __init__(self, memory: _Optional[_Union[Memory, _Mapping]] = ..., score: _Optional[float] = ..., highlight: _Optional[str] = ..., text_score: _Optional[float] = ..., vector_distance: _Optional[float] = ...) -> None: ...

class SearchMemoryResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[SearchMemoryResult]
    def __init__(self, results: _Optional[_Iterable[_Union[SearchMemoryResult, _Mapping]]] = ...) -> None: ...

class ListMemoriesRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "page_size", "page_token", "filter")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    page_size: int
    page_token: str
    filter: MemoryFilter
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., filter: _Optional[_Union[MemoryFilter, _Mapping]] = ...) -> None: ...

class ListMemoriesResponse(_message.Message):
    __slots__ = ("memories", "next_page_token")
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    memories: _containers.RepeatedCompositeFieldContainer[Memory]
    next_page_token: str
    def __init__(self, memories: _Optional[_Iterable[_Union[Memory, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetMemoryRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "memory_id")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    memory_id: str
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., memory_id: _Optional[str] = ...) -> None: ...

class GetMemoryResponse(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: Memory
    def __init__(self, memory: _Optional[_Union[Memory, _Mapping]] = ...) -> None: ...

class DeleteMemoryRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "memory_id")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    memory_id: str
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., memory_id: _Optional[str] = ...) -> None: ...

class DeleteMemoryResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class DeleteSessionMemoriesRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "session_id")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    session_id: str
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., session_id: _Optional[str] = ...) -> None: ...

class DeleteSessionMemoriesResponse(_message.Message):
    __slots__ = ("memories_deleted",)
    MEMORIES_DELETED_FIELD_NUMBER: _ClassVar[int]
    memories_deleted: int
    def __init__(self, memories_deleted: _Optional[int] = ...) -> None: ...
