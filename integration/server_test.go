//go:build linux

package integration

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestAttachServer attaches to a C server on loopback (testdata/cserver.c:
// accept, read, write, a thread a connection) while a load runs against it,
// the daemon use of -p (issue 27; cmd/patchprof-bench measures its
// requests per second). The handler is counted exactly once per request
// made while attached; after the detach the server has no tracer, its
// mappings and code as before, answers every further request, and at its
// end counts every request made (its own counter, the oracle).
func TestAttachServer(t *testing.T) {
	needs(t)
	exe := buildC(t, "cserver.c", "-g", "-O0", "-pthread")
	cmd, in, sc := startPiped(t, exe)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "listening ") {
		t.Fatalf("server did not start: %q", sc.Text())
	}
	addr := "127.0.0.1:" + strings.TrimPrefix(sc.Text(), "listening ")
	pid := cmd.Process.Pid
	made := serverLoad(t, addr, 2, 100) // before the attach: not counted
	codeMaps.Store(pid, execMappings(t, pid))
	sigMaps.Store(pid, dispositions(t, pid))

	save := filepath.Join(t.TempDir(), "p.json")
	pp, esc := startAttached(t, "--save", save, "--funcs", "-p", strconv.Itoa(pid))
	const attached = 3 * 150
	made += serverLoad(t, addr, 3, attached)
	p, _ := detachSaved(t, pp, esc, save)
	if !p.Exit.Detached {
		t.Errorf("saved exit %+v, want detached", p.Exit)
	}
	if n, ok := funcCount(p, "handle_request"); !ok || n != attached {
		t.Errorf("handle_request counted %d (%v) while attached, want exactly %d: one a request", n, ok, attached)
	}
	checkDetached(t, pid)
	checkText(t, pid, exe)
	made += serverLoad(t, addr, 2, 100)
	in.Close()
	if !sc.Scan() || sc.Text() != fmt.Sprintf("served %d", made) {
		t.Errorf("server ended with %q, want \"served %d\"", sc.Text(), made)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("server after the detach: %v, want exit 0", err)
	}
}

// serverLoad makes n requests to the HTTP server at addr over conns
// keep-alive connections side by side (n a multiple of conns), checks
// every answer ("hello\n", status 200), and returns n.
func serverLoad(t *testing.T, addr string, conns, n int) int {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- keepAliveRequests(addr, n/conns)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("load on the server: %v", err)
		}
	}
	return n
}

// keepAliveRequests makes n GET requests one after the other over one
// connection to addr, each answered "hello\n" with status 200.
func keepAliveRequests(addr string, n int) error {
	c, err := net.DialTimeout("tcp", addr, eventBound)
	if err != nil {
		return err
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for k := 0; k < n; k++ {
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
			return err
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return fmt.Errorf("request %d: %w", k+1, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || string(body) != "hello\n" {
			return fmt.Errorf("request %d: %s %q %v, want 200 \"hello\\n\"", k+1, resp.Status, body, err)
		}
	}
	return nil
}
