"""Retries of calls that are safe to repeat, with a bounded, jittered exponential backoff."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import grpc

# Calls whose repetition cannot change the outcome: reads, deletes (a missing
# session is not an error), and appends, which carry an event id the client
# fixes before the first try (the server answers a re-sent id with the stored
# event and `duplicate` set, and writes nothing). CreateSession is not among
# them: a repeat could create a second session, or answer ALREADY_EXISTS for
# the one the first try created. StreamEvents is resumed by the caller from
# its cursor.
RETRIED_METHODS = frozenset(
    {
        "GetSession",
        "ListSessions",
        "ListEvents",
        "GetUserState",
        "AppendEvent",
        "DeleteSession",
        "EraseUserData",
    }
)


@dataclass(frozen=True)
class RetryPolicy:
    """When and how often a retried call is tried again.

    The n-th retry waits a random time between 0 and
    min(max_backoff, initial_backoff * 2**(n-1)) seconds ("full jitter", as
    gRPC's own retry), so clients that failed together do not return
    together. Retries stop at max_attempts tries in all, or when the next
    wait would end past the call's deadline: the deadline bounds the whole
    call, not each try. RetryPolicy(max_attempts=1) turns retries off.
    """

    max_attempts: int = 5
    initial_backoff: float = 0.2
    max_backoff: float = 5.0
    retryable_codes: frozenset[grpc.StatusCode] = field(
        default_factory=lambda: frozenset({grpc.StatusCode.UNAVAILABLE})
    )

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("RetryPolicy.max_attempts must be at least 1")
        if self.initial_backoff <= 0 or self.max_backoff < self.initial_backoff:
            raise ValueError("RetryPolicy needs 0 < initial_backoff <= max_backoff")

    def backoff(self, retry: int) -> float:
        """The wait before the retry-th retry (1-based)."""
        return random.uniform(0, min(self.max_backoff, self.initial_backoff * 2 ** (retry - 1)))


NO_RETRY = RetryPolicy(max_attempts=1)
