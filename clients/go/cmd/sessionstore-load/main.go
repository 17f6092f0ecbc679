// Command sessionstore-load drives closed-loop AppendEvent load through the
// Go client: the benchmark harness (bench/) uses it so that the load
// generator costs little CPU next to the server it measures, as pgbench does
// for the SQL ceiling. Each writer sends its next append when the previous
// one has returned.
//
//	sessionstore-load --url http://127.0.0.1:50051 --writers 64 --connections 8 --seconds 8 --warmup 2 --tag run1
//
// With --read window (GetSession, the 20 most recent events) or --read newest
// (ListEvents, a page of the 20 newest) it instead reads the existing session
// --app/--user/--session of --size events, one call at a time: --warmup-calls
// unmeasured, then --calls measured, each checked to end at seq --size.
//
// It creates its sessions, runs the warm-up, prints "measuring" on a line of
// its own, runs the measured part, prints "measured", and then one line of
// JSON: {"ops", "errors", "firstError", "seconds", "throughput", "latenciesMs"}.
// Writers on their own sessions send expected_revision (an agent holding its
// session); with --hot all writers share one session and do not.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"sessionstore.dev/clients/go/sessionstore"
	pb "sessionstore.dev/gen/go/sessionstore/v1"
)

// TurnText is bench/load.ts's TURN_TEXT: every system appends the same event.
const turnText = "Where is my order? It was supposed to arrive on Tuesday and the tracking page has not changed since Monday morning."

type result struct {
	Ops         int       `json:"ops"`
	Errors      int       `json:"errors"`
	FirstError  string    `json:"firstError,omitempty"`
	Seconds     float64   `json:"seconds"`
	Throughput  float64   `json:"throughput"`
	LatenciesMs []float64 `json:"latenciesMs"`
}

func main() {
	url := flag.String("url", "", "server URL, http://host:port")
	app := flag.String("app", "bench-append", "app name")
	tag := flag.String("tag", "load", "session id prefix, unique per run")
	writers := flag.Int("writers", 1, "concurrent writers")
	hot := flag.Bool("hot", false, "all writers append to one session")
	warmup := flag.Float64("warmup", 2, "unmeasured seconds first")
	seconds := flag.Float64("seconds", 8, "measured seconds")
	connections := flag.Int("connections", 1, "client connections, writers spread over them")
	read := flag.String("read", "", "window or newest: read instead of append")
	user := flag.String("user", "", "the session's user (reads)")
	session := flag.String("session", "", "the session's id (reads)")
	size := flag.Int64("size", 0, "events in the session (reads)")
	warmupCalls := flag.Int("warmup-calls", 30, "unmeasured calls first (reads)")
	calls := flag.Int("calls", 300, "measured calls (reads)")
	flag.Parse()
	if *read != "" {
		readLoad(*url, *read, *app, *user, *session, *size, *warmupCalls, *calls)
		return
	}
	if *url == "" || *writers < 1 {
		fmt.Fprintln(os.Stderr, "usage: sessionstore-load --url URL [--writers N] [--hot] [--warmup S] [--seconds S] [--tag T]")
		os.Exit(2)
	}
	ctx := context.Background()
	if *connections < 1 {
		*connections = 1
	}
	clients := make([]*sessionstore.Client, *connections)
	for i := range clients {
		c, err := sessionstore.Dial(ctx, *url, sessionstore.WithTimeout(60*time.Second))
		if err != nil {
			fail(err)
		}
		defer c.Close()
		clients[i] = c
	}
	client := clients[0]

	sessions := *writers
	if *hot {
		sessions = 1
	}
	revisions := make([]int64, sessions)
	for s := range sessions {
		_, err := client.CreateSession(ctx, &pb.CreateSessionRequest{AppName: *app, UserId: fmt.Sprintf("u%d", s), SessionId: proto.String(fmt.Sprintf("%s-%d", *tag, s))})
		if err != nil {
			fail(err)
		}
	}

	var mu sync.Mutex
	run := func(d time.Duration, n0 int, measure bool) result {
		var r result
		began := time.Now()
		deadline := began.Add(d)
		var wg sync.WaitGroup
		for w := range *writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				slot := w
				if *hot {
					slot = 0
				}
				var own []float64
				errs, first := 0, ""
				for n := n0; time.Now().Before(deadline); n++ {
					req := &pb.AppendEventRequest{AppName: *app, UserId: fmt.Sprintf("u%d", slot), SessionId: fmt.Sprintf("%s-%d", *tag, slot), Event: turn(n, w)}
					if !*hot {
						rev := revisions[slot]
						req.ExpectedRevision = &rev
					}
					t0 := time.Now()
					res, err := clients[w%len(clients)].AppendEvent(ctx, req)
					if err != nil {
						errs++
						if first == "" {
							first = err.Error()
						}
						if errs > 100 {
							break
						}
						continue
					}
					if measure {
						own = append(own, float64(time.Since(t0).Microseconds())/1000)
					}
					if !*hot {
						revisions[slot] = res.GetRevision()
					}
				}
				mu.Lock()
				r.LatenciesMs = append(r.LatenciesMs, own...)
				r.Errors += errs
				if r.FirstError == "" {
					r.FirstError = first
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		r.Seconds = time.Since(began).Seconds()
		r.Ops = len(r.LatenciesMs)
		r.Throughput = float64(r.Ops) / r.Seconds
		return r
	}
	if *warmup > 0 {
		run(time.Duration(*warmup*float64(time.Second)), 0, false)
	}
	fmt.Println("measuring")
	r := run(time.Duration(*seconds*float64(time.Second)), 1_000_000, true)
	fmt.Println("measured")
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		fail(err)
	}
}

// readLoad measures one read, one call at a time, as the harness's TypeScript
// reader does, so the two clients' figures compare.
func readLoad(url, mode, app, user, session string, size int64, warmup, calls int) {
	ctx := context.Background()
	client, err := sessionstore.Dial(ctx, url, sessionstore.WithTimeout(60*time.Second))
	if err != nil {
		fail(err)
	}
	defer client.Close()
	want := min(size, 20)
	one := func() error {
		var first, last int64
		var n int
		switch mode {
		case "window":
			res, err := client.GetSession(ctx, &pb.GetSessionRequest{AppName: app, UserId: user, SessionId: session, NumRecentEvents: proto.Int32(20)})
			if err != nil {
				return err
			}
			events := res.GetSession().GetEvents()
			n = len(events)
			if n > 0 {
				last = events[n-1].GetSeq()
			}
			first = last
		case "newest":
			res, err := client.ListEvents(ctx, &pb.ListEventsRequest{AppName: app, UserId: user, SessionId: session, PageSize: 20, Order: pb.ListEventsRequest_ORDER_DESCENDING})
			if err != nil {
				return err
			}
			n = len(res.GetEvents())
			if n > 0 {
				first = res.GetEvents()[0].GetSeq()
			}
			last = first
		default:
			return fmt.Errorf("unknown --read %q", mode)
		}
		if int64(n) != want || first != size || last != size {
			return fmt.Errorf("%s of %s: %d events, newest seq %d, want %d ending at %d", mode, session, n, last, want, size)
		}
		return nil
	}
	for range warmup {
		if err := one(); err != nil {
			fail(err)
		}
	}
	fmt.Println("measuring")
	var r result
	began := time.Now()
	for range calls {
		t0 := time.Now()
		if err := one(); err != nil {
			fail(err)
		}
		r.LatenciesMs = append(r.LatenciesMs, float64(time.Since(t0).Microseconds())/1000)
	}
	r.Seconds = time.Since(began).Seconds()
	fmt.Println("measured")
	r.Ops = len(r.LatenciesMs)
	r.Throughput = float64(r.Ops) / r.Seconds
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		fail(err)
	}
}

func turn(n, writer int) *pb.Event {
	role := "user"
	return &pb.Event{
		Author:       "user",
		InvocationId: fmt.Sprintf("inv-%d-%d", writer, n),
		Content:      &pb.Content{Role: &role, Parts: []*pb.Part{{Data: &pb.Part_Text{Text: turnText}}}},
		Actions:      &pb.EventActions{StateDelta: &structpb.Struct{Fields: map[string]*structpb.Value{"turn": structpb.NewNumberValue(float64(n))}}},
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "sessionstore-load:", err)
	os.Exit(1)
}
