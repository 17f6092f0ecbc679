// Command sessionstore-cli calls a Sessionstore server from the shell, with
// messages as protobuf JSON. The TypeScript and Python clients ship the same
// commands, so the cross-language test can write with one and read with
// another.
//
//	sessionstore-cli --url http://127.0.0.1:50051 get-session APP USER SESSION
//	sessionstore-cli --url http://127.0.0.1:50051 append-event APP USER SESSION < event.json
//	sessionstore-cli --url http://127.0.0.1:50051 search-memory APP USER QUERY
//
// Output is one line of protobuf JSON (proto field names in lowerCamelCase,
// int64 as strings, bytes as base64). A failed call prints
// "sessionstore-cli: CODE: message" (CODE as in NotFound, Aborted) to stderr
// and exits 1; bad arguments or stdin that is not an Event exit 2.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"sessionstore.dev/clients/go/sessionstore"
	pb "sessionstore.dev/gen/go/sessionstore/v1"
)

const usage = `usage: sessionstore-cli [flags] COMMAND APP USER SESSION

commands:
  get-session    print the session (GetSessionResponse)
  append-event   read an Event from stdin, append it, print the AppendEventResponse
  search-memory  search the user's memory for QUERY (in place of SESSION), print the SearchMemoryResponse

flags:
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sessionstore-cli", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	defaultURL := os.Getenv("SESSIONSTORE_URL")
	if defaultURL == "" {
		defaultURL = "http://127.0.0.1:50051"
	}
	url := fs.String("url", defaultURL, "server URL, or a gRPC target (env SESSIONSTORE_URL)")
	token := fs.String("token", os.Getenv("SESSIONSTORE_TOKEN"), "bearer token (env SESSIONSTORE_TOKEN)")
	timeout := fs.Duration("timeout", 30*time.Second, "deadline for connecting plus the call")
	numRecent := fs.Int("num-recent-events", -1, "get-session: only the N most recent events (-1: all)")
	expected := fs.Int64("expected-revision", -1, "append-event: refuse unless the session is at this revision (-1: no check)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	rest := fs.Args()
	if len(rest) != 4 {
		fs.Usage()
		return 2
	}
	cmd, app, user, sid := rest[0], rest[1], rest[2], rest[3]

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	var opts []sessionstore.Option
	if *token != "" {
		opts = append(opts, sessionstore.WithBearerToken(*token))
	}

	var call func(*sessionstore.Client) (proto.Message, error)
	switch cmd {
	case "get-session":
		req := &pb.GetSessionRequest{AppName: app, UserId: user, SessionId: sid}
		if *numRecent >= 0 {
			n := int32(*numRecent)
			req.NumRecentEvents = &n
		}
		call = func(c *sessionstore.Client) (proto.Message, error) { return c.GetSession(ctx, req) }
	case "append-event":
		in, err := io.ReadAll(stdin)
		if err != nil {
			return fail(stderr, fmt.Errorf("reading stdin: %w", err))
		}
		event := &pb.Event{}
		if err := protojson.Unmarshal(in, event); err != nil {
			return fail(stderr, usageError{fmt.Sprintf("stdin is not an Event in protobuf JSON: %v", err)})
		}
		req := &pb.AppendEventRequest{AppName: app, UserId: user, SessionId: sid, Event: event}
		if *expected >= 0 {
			req.ExpectedRevision = expected
		}
		call = func(c *sessionstore.Client) (proto.Message, error) { return c.AppendEvent(ctx, req) }
	case "search-memory":
		// The fourth argument is the query.
		req := &pb.SearchMemoryRequest{AppName: app, UserId: user, Query: sid, PageSize: 10}
		call = func(c *sessionstore.Client) (proto.Message, error) {
			return pb.NewMemoryServiceClient(c.Conn()).SearchMemory(ctx, req)
		}
	default:
		fmt.Fprintf(stderr, "sessionstore-cli: unknown command %q\n", cmd)
		fs.Usage()
		return 2
	}

	c, err := sessionstore.Dial(ctx, *url, opts...)
	if err != nil {
		return fail(stderr, err)
	}
	defer c.Close()
	resp, err := call(c)
	if err != nil {
		return fail(stderr, err)
	}
	out, err := protojson.Marshal(resp)
	if err != nil {
		return fail(stderr, err)
	}
	// protojson varies its whitespace on purpose; compact it so the output
	// is one stable line.
	var line bytes.Buffer
	if err := json.Compact(&line, out); err != nil {
		return fail(stderr, err)
	}
	line.WriteByte('\n')
	if _, err := stdout.Write(line.Bytes()); err != nil {
		return fail(stderr, err)
	}
	return 0
}

func fail(stderr io.Writer, err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "sessionstore-cli: %s\n", ue.msg)
		return 2
	}
	if st, ok := status.FromError(err); ok {
		fmt.Fprintf(stderr, "sessionstore-cli: %s: %s\n", st.Code(), st.Message())
		return 1
	}
	fmt.Fprintf(stderr, "sessionstore-cli: %v\n", err)
	return 1
}
