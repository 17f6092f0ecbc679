from sessionstore.v1 import session_pb2 as _session_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class WhoAmIRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class WhoAmIResponse(_message.Message):
    __slots__ = ("auth_required", "token_name", "all_apps", "apps", "user_id", "read_only")
    AUTH_REQUIRED_FIELD_NUMBER: _ClassVar[int]
    TOKEN_NAME_FIELD_NUMBER: _ClassVar[int]
    ALL_APPS_FIELD_NUMBER: _ClassVar[int]
    APPS_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    auth_required: bool
    token_name: str
    all_apps: bool
    apps: _containers.RepeatedScalarFieldContainer[str]
    user_id: str
    read_only: bool
    def __init__(self, auth_required: _Optional[bool] = ..., token_name: _Optional[str] = ..., all_apps: _Optional[bool] = ..., apps: _Optional[_Iterable[str]] = ..., user_id: _Optional[str] = ..., read_only: _Optional[bool] = ...) -> None: ...

class ListAppsRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListAppsResponse(_message.Message):
    __slots__ = ("app_names", "next_page_token")
    APP_NAMES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    app_names: _containers.RepeatedScalarFieldContainer[str]
    next_page_token: str
    def __init__(self, app_names: _Optional[_Iterable[str]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class FindSessionsRequest(_message.Message):
    __slots__ = ("app_name", "session_id")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    session_id: str
    def __init__(self, app_name: _Optional[str] = ..., session_id: _Optional[str] = ...) -> None: ...

class FindSessionsResponse(_message.Message):
    __slots__ = ("sessions",)
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[_session_pb2.Session]
    def __init__(self, sessions: _Optional[_Iterable[_Union[_session_pb2.Session, _Mapping]]] = ...) -> None: ...
