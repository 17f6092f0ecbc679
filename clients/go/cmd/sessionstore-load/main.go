// Command sessionstore-load drives closed-loop AppendEvent load through the
// Go client: the benchmark harness (bench/) uses it so that the load
// generator costs little CPU next to the server it measures, as pgbench does
// for the SQL ceiling. Each writer sends its next append when the previous
// one has returned.
//
//	sessionstore-load --url http://127.0.0.1:50051 --writers 64 --connections 8 --seconds 8 --warmup 2 --tag run1
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
	flag.Parse()
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
