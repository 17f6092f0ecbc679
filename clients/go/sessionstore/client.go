// Package sessionstore is a Go client for the Sessionstore gRPC service.
//
//	c, err := sessionstore.Dial(ctx, "http://127.0.0.1:50051")
//	if err != nil { ... }
//	defer c.Close()
//	resp, err := c.CreateSession(ctx, &sessionstorev1.CreateSessionRequest{AppName: "support", UserId: "u_42"})
//
// The Client embeds the generated SessionServiceClient, so every RPC of
// proto/sessionstore/v1/session_service.proto is a method on it.
package sessionstore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	sessionstorev1 "sessionstore.dev/gen/go/sessionstore/v1"
)

// Version goes into the user agent, so server logs can tell client builds apart.
const Version = "0.1.0"

const (
	// DefaultTimeout bounds unary calls whose context has no deadline. An
	// agent turn waits on these calls, so a hung server must surface as an
	// error rather than a stuck agent.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxMessageBytes matches the server's default limit: gRPC's own
	// 4 MiB receive limit would refuse large sessions the server sends.
	DefaultMaxMessageBytes = 16 << 20
)

// Client is a connection to a Sessionstore server with the typed stub.
type Client struct {
	sessionstorev1.SessionServiceClient
	// Health is the standard gRPC health service the server also serves.
	Health healthpb.HealthClient

	conn *grpc.ClientConn
}

type config struct {
	creds           credentials.TransportCredentials
	plaintext       bool
	perRPC          credentials.PerRPCCredentials
	bearer          string
	timeout         time.Duration
	maxMessageBytes int
	lazy            bool
	retry           RetryPolicy
	dialOpts        []grpc.DialOption
}

// Option configures Dial.
type Option func(*config)

// WithInsecure sends plaintext HTTP/2 (h2c) even to a non-loopback host, for
// servers behind a TLS-terminating proxy or inside a trusted network.
func WithInsecure() Option { return func(c *config) { c.plaintext = true } }

// WithTLS connects over TLS with the given configuration (nil: system roots).
func WithTLS(cfg *tls.Config) Option {
	return func(c *config) { c.creds = credentials.NewTLS(cfg) }
}

// WithTransportCredentials sets the transport credentials as is.
func WithTransportCredentials(creds credentials.TransportCredentials) Option {
	return func(c *config) { c.creds = creds }
}

// WithBearerToken sends "authorization: Bearer TOKEN" on every call. Over a
// plaintext connection it is only sent to loopback addresses, so a token is
// never leaked in clear text across a network by accident.
func WithBearerToken(token string) Option { return func(c *config) { c.bearer = token } }

// WithPerRPCCredentials attaches other per-call credentials (OAuth, mTLS
// identities, custom headers).
func WithPerRPCCredentials(creds credentials.PerRPCCredentials) Option {
	return func(c *config) { c.perRPC = creds }
}

// WithTimeout sets the deadline of unary calls whose context has none,
// retries included; 0 disables it. Streams (StreamEvents) are never given
// one: tails are long-lived by design.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithMaxMessageBytes sets the largest message sent or received; keep it in
// step with the server's SESSIONSTORE_MAX_MESSAGE_BYTES.
func WithMaxMessageBytes(n int) Option { return func(c *config) { c.maxMessageBytes = n } }

// WithLazyConnect makes Dial return without waiting for the connection; the
// first call connects instead.
func WithLazyConnect() Option { return func(c *config) { c.lazy = true } }

// WithDialOptions passes extra options to grpc.NewClient (interceptors,
// keepalive, stats handlers); they are applied after the client's own.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(c *config) { c.dialOpts = append(c.dialOpts, opts...) }
}

// Dial connects to a server. target is the URL the server logs
// ("http://127.0.0.1:50051" for plaintext, "https://host" for TLS) or a gRPC
// target ("host:port", "dns:///host:port", "unix:///path"). Without a
// scheme, loopback and unix-socket targets are plaintext and anything else
// uses TLS with the system roots.
//
// Unless WithLazyConnect is given, Dial waits until the connection is ready
// or ctx ends, so a wrong address fails here rather than on the first call.
func Dial(ctx context.Context, target string, opts ...Option) (*Client, error) {
	cfg := config{timeout: DefaultTimeout, maxMessageBytes: DefaultMaxMessageBytes, retry: DefaultRetryPolicy}
	for _, o := range opts {
		o(&cfg)
	}
	grpcTarget, scheme, err := parseTarget(target)
	if err != nil {
		return nil, err
	}
	loopback := isLoopback(grpcTarget)
	creds := cfg.creds
	switch {
	case creds != nil:
	case scheme == "https":
		creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
	case scheme == "http", cfg.plaintext, loopback:
		creds = insecure.NewCredentials()
	default:
		creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
	}
	plaintext := creds.Info().SecurityProtocol == "insecure"

	dialOpts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithUserAgent("sessionstore-go/" + Version),
		grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(cfg.maxMessageBytes),
			grpc.MaxCallSendMsgSize(cfg.maxMessageBytes),
		),
	}
	if cfg.timeout > 0 {
		dialOpts = append(dialOpts, grpc.WithChainUnaryInterceptor(defaultTimeout(cfg.timeout)))
	}
	// Inside the default deadline, which then bounds every try together.
	dialOpts = append(dialOpts, grpc.WithChainUnaryInterceptor(retryUnary(cfg.retry)))
	if cfg.retry.InitialBackoff > 0 && cfg.retry.MaxBackoff >= cfg.retry.InitialBackoff {
		// The connection comes back no slower than calls retry (gRPC's
		// default reconnect backoff grows to two minutes).
		dialOpts = append(dialOpts, grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{
				BaseDelay:  cfg.retry.InitialBackoff,
				Multiplier: backoff.DefaultConfig.Multiplier,
				Jitter:     backoff.DefaultConfig.Jitter,
				MaxDelay:   cfg.retry.MaxBackoff,
			},
			MinConnectTimeout: 20 * time.Second,
		}))
	}
	if cfg.bearer != "" {
		dialOpts = append(dialOpts, grpc.WithPerRPCCredentials(bearerToken{
			token:      cfg.bearer,
			requireTLS: !(plaintext && loopback),
		}))
	}
	if cfg.perRPC != nil {
		dialOpts = append(dialOpts, grpc.WithPerRPCCredentials(cfg.perRPC))
	}
	dialOpts = append(dialOpts, cfg.dialOpts...)

	conn, err := grpc.NewClient(grpcTarget, dialOpts...)
	if err != nil {
		return nil, fmt.Errorf("sessionstore: dial %s: %w", target, err)
	}
	if !cfg.lazy {
		if err := waitReady(ctx, conn); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("sessionstore: dial %s: %w", target, err)
		}
	}
	return &Client{
		SessionServiceClient: sessionstorev1.NewSessionServiceClient(conn),
		Health:               healthpb.NewHealthClient(conn),
		conn:                 conn,
	}, nil
}

// Conn is the underlying connection, for other services on the same port.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Close closes the connection; calls in flight fail with codes.Canceled.
func (c *Client) Close() error { return c.conn.Close() }

func parseTarget(target string) (grpcTarget, scheme string, err error) {
	if target == "" {
		return "", "", errors.New("sessionstore: empty target")
	}
	if !strings.HasPrefix(target, "http://") && !strings.HasPrefix(target, "https://") {
		return target, "", nil
	}
	u, err := url.Parse(target)
	if err != nil {
		return "", "", fmt.Errorf("sessionstore: target %q: %w", target, err)
	}
	if u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return "", "", fmt.Errorf("sessionstore: target %q: want scheme://host[:port] with no path", target)
	}
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	return host, u.Scheme, nil
}

func isLoopback(grpcTarget string) bool {
	if strings.HasPrefix(grpcTarget, "unix:") || strings.HasPrefix(grpcTarget, "unix-abstract:") {
		return true
	}
	// Strip a resolver scheme such as "dns:///" or "passthrough:///".
	if i := strings.Index(grpcTarget, ":///"); i >= 0 {
		grpcTarget = grpcTarget[i+4:]
	}
	host := grpcTarget
	if h, _, err := net.SplitHostPort(grpcTarget); err == nil {
		host = h
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func waitReady(ctx context.Context, conn *grpc.ClientConn) error {
	conn.Connect()
	for {
		s := conn.GetState()
		if s == connectivity.Ready {
			return nil
		}
		if !conn.WaitForStateChange(ctx, s) {
			if s == connectivity.TransientFailure {
				return fmt.Errorf("server not reachable: %w", ctx.Err())
			}
			return ctx.Err()
		}
	}
}

func defaultTimeout(d time.Duration) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}

type bearerToken struct {
	token      string
	requireTLS bool
}

func (b bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

func (b bearerToken) RequireTransportSecurity() bool { return b.requireTLS }

// IsNotFound reports whether err is the server's NOT_FOUND: the session does
// not exist, or belongs to another user.
func IsNotFound(err error) bool { return status.Code(err) == codes.NotFound }

// IsAlreadyExists reports whether CreateSession failed because the id is taken.
func IsAlreadyExists(err error) bool { return status.Code(err) == codes.AlreadyExists }

// IsStale reports whether AppendEvent was refused with ABORTED: its
// expected_revision no longer matches, or (rarely) the write lost a conflict
// with a concurrent one. The server does not tell the two apart in a
// machine-readable way; for both, reload the session and retry the turn.
func IsStale(err error) bool { return status.Code(err) == codes.Aborted }
