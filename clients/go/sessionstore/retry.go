package sessionstore

import (
	"context"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	sessionstorev1 "sessionstore.dev/gen/go/sessionstore/v1"
)

// RetryPolicy says when and how often a call in RetriedMethods that failed
// with a retryable code is tried again.
//
// The n-th retry waits a random time between 0 and
// min(MaxBackoff, InitialBackoff * 2^(n-1)) ("full jitter", as gRPC's own
// retry), so clients that failed together do not come back together. Retries
// stop after MaxAttempts tries in all, or when the next wait would end past
// the call's deadline: the deadline (the context's, or WithTimeout's default)
// bounds the whole call, not each try.
type RetryPolicy struct {
	MaxAttempts    int
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// RetryableCodes defaults to UNAVAILABLE alone.
	RetryableCodes []codes.Code
	// OnRetry, when set, is called before each wait, with the full method
	// name, the number of the try that failed (1-based), its error and the
	// wait: for logs and metrics.
	OnRetry func(method string, attempt int, err error, wait time.Duration)
}

// DefaultRetryPolicy is what Dial uses without WithRetry. The Python and
// TypeScript clients use the same numbers.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 5, InitialBackoff: 200 * time.Millisecond, MaxBackoff: 5 * time.Second}

// RetriedMethods are the calls whose repetition cannot change the outcome:
// reads, deletes (a missing session is not an error), and appends, whose
// event id the client fixes before the first try (the server answers a
// re-sent id with the stored event and `duplicate` set, writing nothing).
// CreateSession is not among them: a repeat could create a second session,
// or answer ALREADY_EXISTS for the one the first try created. StreamEvents
// is resumed by the caller from its cursor.
var RetriedMethods = []string{
	sessionstorev1.SessionService_GetSession_FullMethodName,
	sessionstorev1.SessionService_ListSessions_FullMethodName,
	sessionstorev1.SessionService_ListEvents_FullMethodName,
	sessionstorev1.SessionService_GetUserState_FullMethodName,
	sessionstorev1.SessionService_AppendEvent_FullMethodName,
	sessionstorev1.SessionService_DeleteSession_FullMethodName,
	sessionstorev1.SessionService_EraseUserData_FullMethodName,
}

// WithRetry replaces DefaultRetryPolicy; RetryPolicy{MaxAttempts: 1} turns
// retries off. Appends still get an event id before their one try.
func WithRetry(p RetryPolicy) Option { return func(c *config) { c.retry = p } }

func (p RetryPolicy) retryable(err error) bool {
	want := p.RetryableCodes
	if want == nil {
		want = []codes.Code{codes.Unavailable}
	}
	return slices.Contains(want, status.Code(err))
}

func (p RetryPolicy) backoff(retry int) time.Duration {
	ceiling := p.InitialBackoff
	for i := 1; i < retry && ceiling < p.MaxBackoff; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, p.MaxBackoff)
	if ceiling <= 0 {
		return 0
	}
	return rand.N(ceiling + 1)
}

// retryUnary is inside the default-deadline interceptor, so ctx already
// carries the deadline of the whole call.
func retryUnary(p RetryPolicy) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if in, ok := req.(*sessionstorev1.AppendEventRequest); ok && in.GetEvent() != nil && in.GetEvent().GetId() == "" {
			// Fixed before the first try, so that every try is the same
			// append; the caller's message is left as it was.
			in = proto.Clone(in).(*sessionstorev1.AppendEventRequest)
			in.Event.Id = uuid.NewString()
			req = in
		}
		attempts := 1
		if slices.Contains(RetriedMethods, method) {
			attempts = max(p.MaxAttempts, 1)
		}
		for attempt := 1; ; attempt++ {
			err := invoker(ctx, method, req, reply, cc, opts...)
			if err == nil || attempt >= attempts || !p.retryable(err) {
				return err
			}
			wait := p.backoff(attempt)
			if deadline, ok := ctx.Deadline(); ok && time.Now().Add(wait).After(deadline) {
				return err
			}
			if p.OnRetry != nil {
				p.OnRetry(method, attempt, err, wait)
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return err
			case <-t.C:
			}
		}
	}
}
