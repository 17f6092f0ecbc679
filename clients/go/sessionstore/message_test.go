package sessionstore_test

import (
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // registers "gzip" for grpc.UseCompressor
	"google.golang.org/grpc/status"

	pb "sessionstore.dev/gen/go/sessionstore/v1"
)

// The server percent-encodes grpc-message as the gRPC spec says; grpc-go must
// read every message exactly as the server wrote it, whether the server's own
// gRPC handler answered or Connect's (a compressed request goes to Connect).
func TestErrorMessageArrivesAsWritten(t *testing.T) {
	c := dial(t)
	stub := pb.NewSessionServiceClient(c.Conn())
	app := uniq("app")
	const sid = "naïve 100%,a=b;c/d?e#f&g+h:i@j$k ✓ 日本"
	want := `session "` + sid + `" not found for app "` + app + `" and user "u"`
	for _, tc := range []struct {
		name string
		opts []grpc.CallOption
	}{
		{"fast path", nil},
		{"through Connect", []grpc.CallOption{grpc.UseCompressor("gzip")}},
	} {
		_, err := stub.GetSession(t.Context(), &pb.GetSessionRequest{AppName: app, UserId: "u", SessionId: sid}, tc.opts...)
		if status.Code(err) != codes.NotFound {
			t.Fatalf("%s: %v, want NOT_FOUND", tc.name, err)
		}
		if got := status.Convert(err).Message(); got != want {
			t.Errorf("%s: message\n got %q\nwant %q", tc.name, got, want)
		}
	}
}
