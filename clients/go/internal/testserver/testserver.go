// Package testserver runs the real TypeScript server on a fresh PostgreSQL
// database for the Go tests, the way a deployment would run it: as a
// process, configured by environment, found by the URL it logs.
//
// SESSIONSTORE_TEST_DATABASE_URL is the admin connection used to create and
// drop the database (default: the role scripts/postgres-up.sh creates).
// SESSIONSTORE_TEST_VERBOSE=1 copies the server's log to stderr.
package testserver

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const defaultAdminURL = "postgres://sessionstore:sessionstore@127.0.0.1:5432/postgres"

// Server is a running server process over its own database.
type Server struct {
	// URL is what the server logged, e.g. http://127.0.0.1:41234.
	URL string

	root     string
	tsx      string
	dbURL    string
	adminURL string
	dbName   string
	proc     *process
	log      *tail
}

// process is one run of the server: Halt and Resume make a new one.
type process struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// Main starts a server, runs the package's tests, and stops the server; use
// it as `func TestMain(m *testing.M) { os.Exit(testserver.Main(m, &srv)) }`.
func Main(m *testing.M, srv **Server) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	s, err := Start(ctx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testserver: %v\n", err)
		return 1
	}
	*srv = s
	code := m.Run()
	if err := s.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testserver: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Start creates a database and starts `tsx src/main.ts --port 0` on it from
// the repository root, returning once the server logs that it listens.
func Start(ctx context.Context) (*Server, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	tsx := filepath.Join(root, "node_modules", ".bin", "tsx")
	if _, err := os.Stat(tsx); err != nil {
		return nil, fmt.Errorf("%s missing: run `npm ci` in %s", tsx, root)
	}
	adminURL := os.Getenv("SESSIONSTORE_TEST_DATABASE_URL")
	if adminURL == "" {
		adminURL = defaultAdminURL
	}
	name := "sessionstore_go_" + randomHex(6)
	if err := admin(ctx, adminURL, "CREATE DATABASE "+name); err != nil {
		return nil, fmt.Errorf("create database (is PostgreSQL up? scripts/postgres-up.sh starts it): %w", err)
	}
	dbURL, err := withDatabase(adminURL, name)
	if err != nil {
		return nil, err
	}

	s := &Server{root: root, tsx: tsx, dbURL: dbURL, adminURL: adminURL, dbName: name, log: &tail{max: 200}}
	if err := s.start(ctx, "0"); err != nil {
		return nil, errors.Join(err, s.dropDatabase())
	}
	return s, nil
}

// start runs the server process on port and waits until it listens.
func (s *Server) start(ctx context.Context, port string) error {
	p := &process{exited: make(chan struct{})}
	cmd := exec.Command(s.tsx, "src/main.ts", "--host", "127.0.0.1", "--port", port)
	cmd.Dir = s.root
	cmd.Env = append(os.Environ(),
		"DATABASE_URL="+s.dbURL,
		"SESSIONSTORE_LOG_LEVEL=info",
		// Open tails end within this after SIGTERM, so Stop stays quick.
		"SESSIONSTORE_SHUTDOWN_GRACE_MS=2000",
	)
	// Its own process group: if it ignores SIGTERM, Stop kills tsx and the
	// node process it runs together, and nothing outlives the tests.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A plain pipe rather than StderrPipe: Wait closes that one as soon as
	// the process exits, racing the reader for the last lines of the log.
	logR, logW, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logW, logW
	err = cmd.Start()
	logW.Close()
	if err != nil {
		logR.Close()
		return fmt.Errorf("start server: %w", err)
	}
	p.cmd = cmd
	s.proc = p

	urls := make(chan string, 1)
	go s.readLog(logR, urls)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()

	select {
	case s.URL = <-urls:
		return nil
	case <-p.exited:
		return fmt.Errorf("server exited before listening (%v); log:\n%s", p.waitErr, s.log)
	case <-ctx.Done():
		return errors.Join(fmt.Errorf("server not listening in time: %w; log:\n%s", ctx.Err(), s.log), s.Halt())
	}
}

// Halt stops the server process as Stop does but keeps its database, so
// Resume can bring the same server back.
func (s *Server) Halt() error {
	p := s.proc
	if p == nil {
		return nil
	}
	s.proc = nil
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		if p.waitErr != nil {
			return fmt.Errorf("server exit: %w; log:\n%s", p.waitErr, s.log)
		}
		return nil
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
		return fmt.Errorf("server ignored SIGTERM for 20 s; killed; log:\n%s", s.log)
	}
}

// Resume starts a halted server again on the port it had, over the same
// database, and returns once it listens.
func (s *Server) Resume(ctx context.Context) error {
	u, err := url.Parse(s.URL)
	if err != nil {
		return err
	}
	return s.start(ctx, u.Port())
}

// Stop sends SIGTERM, waits for a clean exit (killing the process group
// after 20 s), and drops the database.
func (s *Server) Stop() error {
	return errors.Join(s.Halt(), s.dropDatabase())
}

// Log is the tail of the server's output, for failure messages.
func (s *Server) Log() string { return s.log.String() }

func (s *Server) readLog(r io.ReadCloser, urls chan<- string) {
	defer r.Close()
	verbose := os.Getenv("SESSIONSTORE_TEST_VERBOSE") == "1"
	sent := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		s.log.add(line)
		if verbose {
			fmt.Fprintln(os.Stderr, "server:", line)
		}
		if sent {
			continue
		}
		var entry struct {
			Msg string `json:"msg"`
			URL string `json:"url"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "sessionstore listening" && entry.URL != "" {
			urls <- entry.URL
			sent = true
		}
	}
	// Keep draining so a chatty server never blocks on a full pipe.
	_, _ = io.Copy(io.Discard, r)
}

func (s *Server) dropDatabase() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := admin(ctx, s.adminURL, "DROP DATABASE IF EXISTS "+s.dbName+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", s.dbName, err)
	}
	return nil
}

func admin(ctx context.Context, adminURL, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

func withDatabase(adminURL, name string) (string, error) {
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", fmt.Errorf("SESSIONSTORE_TEST_DATABASE_URL: %w", err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// repoRoot is the nearest directory above the working directory (a package
// directory under `go test`) that holds the server's entry point.
func repoRoot() (string, error) {
	if root := os.Getenv("SESSIONSTORE_REPO_ROOT"); root != "" {
		return root, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "src", "main.ts")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "package.json")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no src/main.ts above the working directory; set SESSIONSTORE_REPO_ROOT")
		}
		dir = parent
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// tail keeps the last lines of the server's output.
type tail struct {
	mu    sync.Mutex
	lines []string
	max   int
}

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}
