package sessionstore

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct{ in, target, scheme string }{
		{"http://127.0.0.1:50051", "127.0.0.1:50051", "http"},
		{"http://127.0.0.1:50051/", "127.0.0.1:50051", "http"},
		{"https://store.example.com", "store.example.com:443", "https"},
		{"http://[::1]:8080", "[::1]:8080", "http"},
		{"127.0.0.1:50051", "127.0.0.1:50051", ""},
		{"dns:///store.internal:50051", "dns:///store.internal:50051", ""},
	} {
		target, scheme, err := parseTarget(tc.in)
		if err != nil || target != tc.target || scheme != tc.scheme {
			t.Errorf("parseTarget(%q) = %q, %q, %v; want %q, %q", tc.in, target, scheme, err, tc.target, tc.scheme)
		}
	}
	for _, bad := range []string{"", "http://", "http://host:1/path", "http://host:1?x=1"} {
		if _, _, err := parseTarget(bad); err == nil {
			t.Errorf("parseTarget(%q): want error", bad)
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for in, want := range map[string]bool{
		"127.0.0.1:1": true, "127.8.9.10:1": true, "[::1]:1": true, "localhost:1": true,
		"dns:///localhost:1": true, "unix:///tmp/s.sock": true, "store.internal:1": false,
		"10.0.0.1:1": false, "dns:///store.example.com:443": false,
	} {
		if got := isLoopback(in); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", in, got, want)
		}
	}
}

// A Go gRPC server in the test process shows what goes on the wire: the
// bearer token, and the default deadline on calls that set none.
func TestBearerTokenAndDefaultTimeout(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		auth     []string
		deadline time.Duration
	}
	calls := make(chan seen, 4)
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		var left time.Duration
		if d, ok := ctx.Deadline(); ok {
			left = time.Until(d)
		}
		calls <- seen{auth: md.Get("authorization"), deadline: left}
		return handler(ctx, req)
	}))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, "http://"+lis.Addr().String(), WithBearerToken("s3cret"), WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	if _, err := c.Health.Check(t.Context(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	got := <-calls
	if len(got.auth) != 1 || got.auth[0] != "Bearer s3cret" {
		t.Errorf("authorization = %q", got.auth)
	}
	if got.deadline <= 0 || got.deadline > 5*time.Second {
		t.Errorf("deadline = %v, want the 5s default", got.deadline)
	}

	short, cancelShort := context.WithTimeout(t.Context(), time.Second)
	defer cancelShort()
	if _, err := c.Health.Check(short, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := <-calls; got.deadline > time.Second {
		t.Errorf("caller's deadline replaced: %v", got.deadline)
	}
}

func TestDialFailsFastOnNothingListening(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if c, err := Dial(ctx, "http://"+addr); err == nil {
		c.Close()
		t.Fatal("Dial to a closed port succeeded")
	}
	c, err := Dial(t.Context(), "http://"+addr, WithLazyConnect())
	if err != nil {
		t.Fatalf("lazy Dial should not connect: %v", err)
	}
	c.Close()
}
