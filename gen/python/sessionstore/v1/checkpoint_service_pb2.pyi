import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TypedValue(_message.Message):
    __slots__ = ("type", "data")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    type: str
    data: bytes
    def __init__(self, type: _Optional[str] = ..., data: _Optional[bytes] = ...) -> None: ...

class ChannelValue(_message.Message):
    __slots__ = ("channel", "version", "value")
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    channel: str
    version: str
    value: TypedValue
    def __init__(self, channel: _Optional[str] = ..., version: _Optional[str] = ..., value: _Optional[_Union[TypedValue, _Mapping]] = ...) -> None: ...

class PendingWrite(_message.Message):
    __slots__ = ("task_id", "channel", "value", "task_path", "idx")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    TASK_PATH_FIELD_NUMBER: _ClassVar[int]
    IDX_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    channel: str
    value: TypedValue
    task_path: str
    idx: int
    def __init__(self, task_id: _Optional[str] = ..., channel: _Optional[str] = ..., value: _Optional[_Union[TypedValue, _Mapping]] = ..., task_path: _Optional[str] = ..., idx: _Optional[int] = ...) -> None: ...

class Checkpoint(_message.Message):
    __slots__ = ("thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "body", "channel_versions", "metadata", "metadata_json", "channel_values", "pending_writes", "create_time")
    class ChannelVersionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_NS_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    METADATA_JSON_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_VALUES_FIELD_NUMBER: _ClassVar[int]
    PENDING_WRITES_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str
    body: TypedValue
    channel_versions: _containers.ScalarMap[str, str]
    metadata: TypedValue
    metadata_json: str
    channel_values: _containers.RepeatedCompositeFieldContainer[ChannelValue]
    pending_writes: _containers.RepeatedCompositeFieldContainer[PendingWrite]
    create_time: _timestamp_pb2.Timestamp
    def __init__(self, thread_id: _Optional[str] = ..., checkpoint_ns: _Optional[str] = ..., checkpoint_id: _Optional[str] = ..., parent_checkpoint_id: _Optional[str] = ..., body: _Optional[_Union[TypedValue, _Mapping]] = ..., channel_versions: _Optional[_Mapping[str, str]] = ..., metadata: _Optional[_Union[TypedValue, _Mapping]] = ..., metadata_json: _Optional[str] = ..., channel_values: _Optional[_Iterable[_Union[ChannelValue, _Mapping]]] = ..., pending_writes: _Optional[_Iterable[_Union[PendingWrite, _Mapping]]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class PutCheckpointRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "body", "channel_versions", "metadata", "metadata_json", "new_values")
    class ChannelVersionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_NS_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    METADATA_JSON_FIELD_NUMBER: _ClassVar[int]
    NEW_VALUES_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str
    body: TypedValue
    channel_versions: _containers.ScalarMap[str, str]
    metadata: TypedValue
    metadata_json: str
    new_values: _containers.RepeatedCompositeFieldContainer[ChannelValue]
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., checkpoint_ns: _Optional[str] = ..., checkpoint_id: _Optional[str] = ..., parent_checkpoint_id: _Optional[str] = ..., body: _Optional[_Union[TypedValue, _Mapping]] = ..., channel_versions: _Optional[_Mapping[str, str]] = ..., metadata: _Optional[_Union[TypedValue, _Mapping]] = ..., metadata_json: _Optional[str] = ..., new_values: _Optional[_Iterable[_Union[ChannelValue, _Mapping]]] = ...) -> None: ...

class PutCheckpointResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PutWritesRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "task_path", "writes", "replace")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_NS_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_PATH_FIELD_NUMBER: _ClassVar[int]
    WRITES_FIELD_NUMBER: _ClassVar[int]
    REPLACE_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    task_id: str
    task_path: str
    writes: _containers.RepeatedCompositeFieldContainer[PendingWrite]
    replace: bool
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., checkpoint_ns: _Optional[str] = ..., checkpoint_id: _Optional[str] = ..., task_id: _Optional[str] = ..., task_path: _Optional[str] = ..., writes: _Optional[_Iterable[_Union[PendingWrite, _Mapping]]] = ..., replace: _Optional[bool] = ...) -> None: ...

class PutWritesResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetCheckpointRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "thread_id", "checkpoint_ns", "checkpoint_id")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_NS_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., checkpoint_ns: _Optional[str] = ..., checkpoint_id: _Optional[str] = ...) -> None: ...

class GetCheckpointResponse(_message.Message):
    __slots__ = ("checkpoint",)
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    checkpoint: Checkpoint
    def __init__(self, checkpoint: _Optional[_Union[Checkpoint, _Mapping]] = ...) -> None: ...

class ListCheckpointsRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "thread_id", "checkpoint_ns", "checkpoint_id", "filter_json", "before_checkpoint_id", "page_size", "page_token")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_NS_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    FILTER_JSON_FIELD_NUMBER: _ClassVar[int]
    BEFORE_CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    filter_json: str
    before_checkpoint_id: str
    page_size: int
    page_token: str
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., checkpoint_ns: _Optional[str] = ..., checkpoint_id: _Optional[str] = ..., filter_json: _Optional[str] = ..., before_checkpoint_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListCheckpointsResponse(_message.Message):
    __slots__ = ("checkpoints", "next_page_token")
    CHECKPOINTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    checkpoints: _containers.RepeatedCompositeFieldContainer[Checkpoint]
    next_page_token: str
    def __init__(self, checkpoints: _Optional[_Iterable[_Union[Checkpoint, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DeleteThreadRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "thread_id")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    thread_id: str
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., thread_id: _Optional[str] = ...) -> None: ...

class DeleteThreadResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CopyThreadRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "source_thread_id", "target_thread_id")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    source_thread_id: str
    target_thread_id: str
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., source_thread_id: _Optional[str] = ..., target_thread_id: _Optional[str] = ...) -> None: ...

class CopyThreadResponse(_message.Message):
    __slots__ = ("checkpoints_copied",)
    CHECKPOINTS_COPIED_FIELD_NUMBER: _ClassVar[int]
    checkpoints_copied: int
    def __init__(self, checkpoints_copied: _Optional[int] = ...) -> None: ...

class DeleteRunsRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "run_ids")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_IDS_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    run_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., run_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class DeleteRunsResponse(_message.Message):
    __slots__ = ("checkpoints_deleted",)
    CHECKPOINTS_DELETED_FIELD_NUMBER: _ClassVar[int]
    checkpoints_deleted: int
    def __init__(self, checkpoints_deleted: _Optional[int] = ...) -> None: ...

class PruneThreadsRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "thread_ids", "strategy")
    class Strategy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        STRATEGY_UNSPECIFIED: _ClassVar[PruneThreadsRequest.Strategy]
        STRATEGY_KEEP_LATEST: _ClassVar[PruneThreadsRequest.Strategy]
        STRATEGY_DELETE: _ClassVar[PruneThreadsRequest.Strategy]
    STRATEGY_UNSPECIFIED: PruneThreadsRequest.Strategy
    STRATEGY_KEEP_LATEST: PruneThreadsRequest.Strategy
    STRATEGY_DELETE: PruneThreadsRequest.Strategy
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_IDS_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    thread_ids: _containers.RepeatedScalarFieldContainer[str]
    strategy: PruneThreadsRequest.Strategy
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., thread_ids: _Optional[_Iterable[str]] = ..., strategy: _Optional[_Union[PruneThreadsRequest.Strategy, str]] = ...) -> None: ...

class PruneThreadsResponse(_message.Message):
    __slots__ = ("checkpoints_deleted",)
    CHECKPOINTS_DELETED_FIELD_NUMBER: _ClassVar[int]
    checkpoints_deleted: int
    def __init__(self, checkpoints_deleted: _Optional[int] = ...) -> None: ...
