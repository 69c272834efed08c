//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// preforkServer is a running prefork.c: its parent's PID and its port.
type preforkServer struct {
	cmd    *exec.Cmd
	port   string
	stderr *bytes.Buffer
}

// request sends one request and returns the worker's answer, "ok PID N".
// The deadline only keeps a server without workers from hanging the test.
func (s *preforkServer) request() (string, error) {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+s.port, time.Minute)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := c.Write([]byte("hello\n")); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("read the answer: %w", err)
	}
	if !strings.HasPrefix(line, "ok ") {
		return "", fmt.Errorf("answer %q, want ok PID N", line)
	}
	return strings.TrimSpace(line), nil
}

// load sends n requests from clients at once, each one after another,
// and returns how many were served (answered "ok").
func (s *preforkServer) load(t *testing.T, clients, n int) int {
	t.Helper()
	var mu sync.Mutex
	served := 0
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < n; i += clients {
				if _, err := s.request(); err != nil {
					t.Errorf("request %d: %v", i, err)
					continue
				}
				mu.Lock()
				served++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return served
}

// workers returns the PIDs of the server's workers now.
func (s *preforkServer) workers(t *testing.T) []int {
	t.Helper()
	pid := s.cmd.Process.Pid
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}

// TestWatchPrefork is issue 30's Done-when: a pre-forking server (a parent
// and 4 workers, each replaced after 10 requests) runs before the watch;
// under a bounded loopback load of 4 clients, the aggregate's count of its
// handler equals the requests served, across some twenty worker
// replacements (each new worker is a fork of the watched parent, followed
// by the parent's patchprof). After SIGTERM to the watch, the parent and
// the workers run on untraced, their code and signal dispositions as
// found, and serve on; the server then ends cleanly.
func TestWatchPrefork(t *testing.T) {
	mustHaveCC(t)
	mustHavePtrace(t)
	mustHaveCLI(t)
	exe := watchedCopy(t, buildC(t, "prefork.c", "-g", "-O0"))
	cmd := exec.Command(exe, "10")
	s := &preforkServer{cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = s.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "port ") {
		t.Fatalf("server did not start: %q %s", sc.Text(), s.stderr)
	}
	s.port = strings.TrimPrefix(sc.Text(), "port ")
	parent := cmd.Process.Pid
	before := execMappings(t, parent)
	codeMaps.Store(parent, before)
	sigMaps.Store(parent, dispositions(t, parent))
	first := s.workers(t)
	if len(first) != 4 {
		t.Fatalf("%d workers, want 4: %v", len(first), first)
	}

	save := filepath.Join(t.TempDir(), "agg.json")
	pp, wl, _ := startWatch(t, "--exe", exe, "--funcs", "--func", "^handle$", "--save", save)
	attached := map[int]bool{}
	for range 5 {
		pid, _ := strconv.Atoi(wl.waitFor(t, watchAttachedRE)[1])
		attached[pid] = true
	}
	for _, pid := range append([]int{parent}, first...) {
		if !attached[pid] {
			t.Fatalf("PID %d not attached; attached: %v\n%s", pid, attached, wl.all.String())
		}
	}

	const requests = 200
	served := s.load(t, 4, requests)
	if served != requests {
		t.Fatalf("served %d of %d requests under the watch\n%s", served, requests, wl.all.String())
	}
	p := stopWatchProfile(t, pp, wl, save)
	if n, ok := funcCount(p, "handle"); !ok || n != int64(served) {
		t.Errorf("handle counted %d (%v) over the server's processes, want exactly the %d requests served\n%s", n, ok, served, wl.all.String())
	}

	// Unharmed: the parent as found, every worker (the first ones gone,
	// replaced by forks made under the watch) untraced with the parent's
	// code, and all of them serving on.
	checkDetached(t, parent)
	now := s.workers(t)
	if len(now) != 4 {
		t.Fatalf("%d workers after the watch, want 4: %v", len(now), now)
	}
	for _, pid := range now {
		checkDetached(t, pid)
		if got := execMappings(t, pid); got != before {
			t.Errorf("worker %d's executable mappings after the watch differ from the server's before it:\n%s\nwant:\n%s", pid, got, before)
		}
		if attached[pid] {
			t.Errorf("worker %d is one of the first, after %d requests of 10 each", pid, served)
		}
	}
	if n := s.load(t, 2, 40); n != 40 {
		t.Errorf("served %d of 40 requests after the watch", n)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("server: %v (want exit 0)\n%s", err, s.stderr)
	}
	if !strings.Contains(s.stderr.String(), "replaced ") {
		t.Errorf("server's stderr: %q, want its count of replaced workers", s.stderr)
	}
}
