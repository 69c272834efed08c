//go:build linux

package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A served is a run of patchprof --listen over the oncommand target, which
// calls work only when told.
type served struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *lockedBuffer
	base   string // http://127.0.0.1:PORT
	save   string
}

var servingRE = regexp.MustCompile(`patchprof: serving the counts at (http://\S+)/\n`)

// startServed starts patchprof --funcs --func ^work$ --save FILE with args
// (the --listen flags) on the oncommand target and waits until it serves
// and the target is ready.
func startServed(t *testing.T, args ...string) *served {
	t.Helper()
	needs(t)
	return startServedOn(t, buildC(t, "oncommand.c", "-g", "-O0", "-pthread"), args...)
}

// startServedOn is startServed on exe, a program that speaks oncommand's
// protocol and counts its calls of work.
func startServedOn(t *testing.T, exe string, args ...string) *served {
	t.Helper()
	needs(t)
	s := &served{t: t, stderr: &lockedBuffer{}, save: filepath.Join(t.TempDir(), "p.json")}
	all := append([]string{"--funcs", "--func", "^work$", "--save", s.save}, args...)
	if e := os.Getenv(engineEnv); e != "" {
		all = append([]string{"--engine=" + e}, all...)
	}
	s.cmd = exec.Command(patchprofBin, append(all, exe)...)
	s.cmd.Stderr = s.stderr
	var err error
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.cmd.Process.Kill(); s.cmd.Wait() })
	s.out = bufio.NewScanner(out)
	if !s.out.Scan() || s.out.Text() != "ready" {
		t.Fatalf("target did not start: %q\n%s", s.out.Text(), s.stderr)
	}
	// patchprof says where it serves before it starts the target, but
	// its stderr reaches the buffer through exec's copying goroutine,
	// which may not have run yet when the target's first line arrives.
	m := servingRE.FindStringSubmatch(s.stderr.String())
	for deadline := time.Now().Add(eventBound); m == nil && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		m = servingRE.FindStringSubmatch(s.stderr.String())
	}
	if m == nil {
		t.Fatalf("patchprof does not say where it serves:\n%s", s.stderr)
	}
	s.base = m[1]
	return s
}

// ask makes the target call work n times and returns its own total of
// calls so far.
func (s *served) ask(n int) int64 {
	s.t.Helper()
	fmt.Fprintf(s.in, "%d\n", n)
	if !s.out.Scan() {
		s.t.Fatalf("target did not answer %d: %v\n%s", n, s.out.Err(), s.stderr)
	}
	var got, total int64
	if _, err := fmt.Sscanf(s.out.Text(), "done %d %d", &got, &total); err != nil || got != int64(n) {
		s.t.Fatalf("target answered %q to %d", s.out.Text(), n)
	}
	return total
}

// finish ends the target's input, waits for patchprof and checks that it
// and the target exited 0 and saved work's total.
func (s *served) finish(total int64) {
	s.t.Helper()
	s.in.Close()
	if err := s.cmd.Wait(); err != nil {
		s.t.Fatalf("patchprof: %v (want exit 0, the target's)\n%s", err, s.stderr)
	}
	p, err := readProfile(s.save)
	if err != nil {
		s.t.Fatal(err)
	}
	if n, _ := funcCount(p, "work"); n != total {
		s.t.Errorf("saved profile: work %d, want the target's own count %d", n, total)
	}
}

// getURL returns the status and body of a GET.
func getURL(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// waitMetric waits until the /metrics exposition at base holds the line
// want.
func waitMetric(t *testing.T, base, want string) {
	t.Helper()
	for deadline := time.Now().Add(eventBound); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, body := getURL(t, base+"/metrics"); slices.Contains(strings.Split(body, "\n"), want) {
			return
		}
	}
	t.Fatalf("/metrics never held %q", want)
}

// TestListenPprofDelta: `go tool pprof -top URL?seconds=2` shows exactly
// the calls made in its window: not those before, not those after.
func TestListenPprofDelta(t *testing.T) {
	s := startServed(t, "--listen", "127.0.0.1:0")
	s.ask(300) // before the window
	pp := exec.Command("go", "tool", "pprof", "-top", s.base+"/debug/pprof/counts?seconds=2")
	// Where pprof keeps what it fetched (HOME stays: go tool finds its
	// build cache there).
	pp.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
	var out lockedBuffer
	pp.Stdout, pp.Stderr = &out, &out
	if err := pp.Start(); err != nil {
		t.Fatal(err)
	}
	// The window has begun once the request's first snapshot is taken,
	// which /metrics tells; the target answers within the window, which
	// ends two seconds after it.
	waitMetric(t, s.base, "patchprof_delta_windows_open 1")
	s.ask(70)
	if err := pp.Wait(); err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, out.String())
	}
	total := s.ask(11) // after the window
	report := out.String()
	if !strings.Contains(report, "Showing nodes accounting for 70, 100% of 70 total") {
		t.Errorf("pprof -top does not total the 70 calls of the window:\n%s", report)
	}
	if !regexp.MustCompile(`(?m)^\s+70\s+100%\s+100%\s+70\s+100%\s+work$`).MatchString(report) {
		t.Errorf("pprof -top has no row of 70 calls of work:\n%s", report)
	}
	if !strings.Contains(report, "Type: calls") || !regexp.MustCompile(`Duration: 2(\.\d+)?s`).MatchString(report) {
		t.Errorf("pprof header lacks the sample type or the 2s duration:\n%s", report)
	}
	s.finish(total)
}

// TestListenPrometheus: a real Prometheus server scrapes /metrics, and
// patchprof_function_calls_total read back through its query API equals
// the target's own count of calls, then follows it.
func TestListenPrometheus(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skipf("prometheus not found in PATH (%v): the test scrapes with a real Prometheus server (Debian package prometheus)", err)
	}
	s := startServed(t, "--listen", "127.0.0.1:0")
	if promtool, err := exec.LookPath("promtool"); err == nil {
		// promtool lints the exposition: names, units, HELP and TYPE.
		_, body := getURL(t, s.base+"/metrics")
		lint := exec.Command(promtool, "check", "metrics")
		lint.Stdin = strings.NewReader(body)
		if msg, err := lint.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s\n%s", err, msg, body)
		}
	}
	waitFor := startPrometheus(t, prom, s.base)
	exe := fmt.Sprintf(`{job="patchprof",function="work",module=%q}`, buildC(t, "oncommand.c", "-g", "-O0", "-pthread"))
	waitFor(`up{job="patchprof"}`, "1")
	waitFor("patchprof_function_calls_total"+exe, "0")
	total := s.ask(1234)
	waitFor("patchprof_function_calls_total"+exe, strconv.FormatInt(total, 10))
	total = s.ask(321)
	waitFor("patchprof_function_calls_total"+exe, strconv.FormatInt(total, 10))
	waitFor(`patchprof_target_running{job="patchprof"}`, "1")
	waitFor(`patchprof_hits_total{job="patchprof"}`, strconv.FormatInt(total, 10))
	s.finish(total)
}

// startPrometheus starts the Prometheus server prom scraping base (an
// http:// URL) every second, stopped at the test's end, and returns a
// function that waits until a PromQL query with a single result gives
// want (eventBound at most).
func startPrometheus(t *testing.T, prom, base string) func(q, want string) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	target := strings.TrimPrefix(base, "http://")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: patchprof
    static_configs:
      - targets: ['%s']
`, target)), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	promAddr := l.Addr().String()
	l.Close()
	var plog lockedBuffer
	pc := exec.Command(prom, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	pc.Stdout, pc.Stderr = &plog, &plog
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Process.Signal(syscall.SIGTERM); pc.Wait() })

	// query returns the value of a PromQL query with a single result, or
	// "" while it has none.
	query := func(q string) string {
		resp, err := http.Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return "" // not listening yet
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			return "" // starting
		}
		var r struct {
			Status string
			Data   struct {
				Result []struct {
					Metric map[string]string
					Value  [2]any
				}
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
			t.Fatalf("query %s: %v, status %q", q, err, r.Status)
		}
		if len(r.Data.Result) != 1 {
			if len(r.Data.Result) > 1 {
				t.Fatalf("query %s: %d series, want 1: %+v", q, len(r.Data.Result), r.Data.Result)
			}
			return ""
		}
		v, _ := r.Data.Result[0].Value[1].(string)
		return v
	}
	// The waiter: until the query gives want.
	return func(q, want string) {
		t.Helper()
		got := ""
		for deadline := time.Now().Add(eventBound); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
			if got = query(q); got == want {
				return
			}
		}
		t.Fatalf("Prometheus: %s = %q after %v, want %q\nprometheus log:\n%s", q, got, eventBound, want, tail(plog.String()))
	}
}

// TestListenBadRequests: unknown paths, bad seconds, other methods and a
// client that never finishes its request get clear HTTP errors, and the
// counts are served on meanwhile.
func TestListenBadRequests(t *testing.T) {
	s := startServed(t, "--listen", ":0")
	if !strings.HasPrefix(s.base, "http://127.0.0.1:") {
		t.Errorf("--listen :0 serves at %s, want loopback", s.base)
	}
	if strings.Contains(s.stderr.String(), "warning") {
		t.Errorf("a warning for a loopback address:\n%s", s.stderr)
	}
	// A slow client: half a request line, never finished.
	slow, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fmt.Fprintf(slow, "GET /metrics HTTP/1.1\r\nHost: x\r\n")
	total := s.ask(40)
	for _, c := range []struct {
		path string
		code int
		msg  string
	}{
		{"/nope", 404, "404 Not Found: no endpoint /nope: see / for the list\n"},
		{"/debug/pprof/counts?seconds=abc", 400, "400 Bad Request: seconds=\"abc\": give a whole number of seconds from 1 to 3600\n"},
		{"/debug/pprof/counts?seconds=100000", 400, "400 Bad Request: seconds=\"100000\": give a whole number of seconds from 1 to 3600\n"},
		{"/debug/pprof/counts?seconds=-1", 400, "400 Bad Request: seconds=\"-1\": give a whole number of seconds from 1 to 3600\n"},
		{"/healthz", 200, "ok\n"},
	} {
		if code, body := getURL(t, s.base+c.path); code != c.code || body != c.msg {
			t.Errorf("GET %s: %d %q, want %d %q", c.path, code, body, c.code, c.msg)
		}
	}
	resp, err := http.Post(s.base+"/metrics", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /metrics: %d, Allow %q; want 405, GET, HEAD", resp.StatusCode, resp.Header.Get("Allow"))
	}
	code, body := getURL(t, s.base+"/metrics")
	if want := fmt.Sprintf("\npatchprof_function_calls_total{module=%q,function=\"work\"} %d\n", buildC(t, "oncommand.c", "-g", "-O0", "-pthread"), total); code != 200 || !strings.Contains(body, want) {
		t.Errorf("/metrics beside a slow client: %d, want a line %q in:\n%s", code, want, body)
	}
	s.finish(total)
}

// TestListenAttachSIGTERM: attached with --listen on a Unix socket,
// SIGTERM still detaches, writes --save and closes the socket; the target
// runs on.
func TestListenAttachSIGTERM(t *testing.T) {
	needs(t)
	exe := buildC(t, "oncommand.c", "-g", "-O0", "-pthread")
	target := exec.Command(exe)
	in, _ := target.StdinPipe()
	out, _ := target.StdoutPipe()
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { target.Process.Kill(); target.Wait() }()
	sc := bufio.NewScanner(out)
	ask := func(n int) int64 {
		t.Helper()
		fmt.Fprintf(in, "%d\n", n)
		var got, total int64
		if !sc.Scan() {
			t.Fatalf("target did not answer")
		}
		fmt.Sscanf(sc.Text(), "done %d %d", &got, &total)
		return total
	}
	if !sc.Scan() || sc.Text() != "ready" {
		t.Fatalf("target did not start: %q", sc.Text())
	}
	before := ask(500)
	dir := t.TempDir()
	sock, save := filepath.Join(dir, "pp.sock"), filepath.Join(dir, "p.json")
	pp := exec.Command(patchprofBin, "--save", save, "--funcs", "--func", "^work$", "--listen", "unix:"+sock, "-p", strconv.Itoa(target.Process.Pid))
	var stderr lockedBuffer
	pp.Stderr = &stderr
	if err := pp.Start(); err != nil {
		t.Fatal(err)
	}
	defer pp.Process.Kill()
	for deadline := time.Now().Add(eventBound); !strings.Contains(stderr.String(), "attached to PID"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("patchprof did not attach:\n%s", stderr.String())
		}
	}
	if !strings.Contains(stderr.String(), "patchprof: serving the counts at unix:"+sock+"\n") {
		t.Errorf("patchprof does not name its socket:\n%s", stderr.String())
	}
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	during := ask(25) - before
	resp, err := c.Get("http://patchprof/profile.json")
	if err != nil {
		t.Fatal(err)
	}
	var p profile
	err = json.NewDecoder(resp.Body).Decode(&p)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := funcCount(&p, "work"); n != during || !p.Exit.Running {
		t.Errorf("/profile.json over the socket: work %d, exit %+v; want %d, running", n, p.Exit, during)
	}
	c.CloseIdleConnections()
	pp.Process.Signal(syscall.SIGTERM)
	if err := pp.Wait(); err != nil {
		t.Fatalf("patchprof after SIGTERM: %v\n%s", err, stderr.String())
	}
	saved, err := readProfile(save)
	if err != nil {
		t.Fatalf("no profile saved after SIGTERM: %v\n%s", err, stderr.String())
	}
	if n, _ := funcCount(saved, "work"); n != during || !saved.Exit.Detached {
		t.Errorf("saved: work %d, exit %+v; want %d, detached", n, saved.Exit, during)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left after patchprof exited: %v", err)
	}
	if after := ask(7); after != before+during+7 {
		t.Errorf("target after the detach: total %d, want %d", after, before+during+7)
	}
}

// TestListenPublicWarning: a non-loopback address without a token is
// served with a one-line warning; with a token, requests without it get
// 401.
func TestListenPublicWarning(t *testing.T) {
	s := startServed(t, "--listen", "0.0.0.0:0")
	if n := strings.Count(s.stderr.String(), "there is no authentication"); n != 1 {
		t.Errorf("want one warning line about no authentication:\n%s", s.stderr)
	}
	s.finish(s.ask(3))

	tok := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tok, []byte("abc123\n"), 0o600)
	s = startServed(t, "--listen", "127.0.0.1:0", "--listen-token", tok)
	if code, body := getURL(t, s.base+"/metrics"); code != 401 || !strings.Contains(body, "missing or wrong bearer token") {
		t.Errorf("/metrics without the token: %d %q", code, body)
	}
	req, _ := http.NewRequest("GET", s.base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer abc123")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/metrics with the token: %d", resp.StatusCode)
	}
	s.finish(s.ask(3))
}

// TestListenLoad: 10 seconds of concurrent requests to every endpoint (four
// clients, loopback) while the target calls work in batches: every request
// is answered, no count is lost (the saved total equals the target's own),
// the target answers every batch, and patchprof's memory stays flat.
func TestListenLoad(t *testing.T) {
	s := startServed(t, "--listen", "127.0.0.1:0")
	paths := []string{"/", "/healthz", "/metrics", "/profile.json", "/debug/pprof/counts", "/debug/pprof/counts?seconds=1"}
	stop := make(chan struct{})
	type tally struct {
		ok  int
		bad []string
	}
	results := make(chan tally, 4)
	client := &http.Client{Timeout: 30 * time.Second}
	for c := 0; c < 4; c++ {
		go func(c int) {
			var r tally
			defer func() { results <- r }()
			for k := c; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := client.Get(s.base + paths[k%len(paths)])
				if err != nil {
					r.bad = append(r.bad, fmt.Sprintf("%s: %v", paths[k%len(paths)], err))
					continue
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					r.bad = append(r.bad, fmt.Sprintf("%s: %d %v", paths[k%len(paths)], resp.StatusCode, err))
					continue
				}
				r.ok++
			}
		}(c)
	}
	var total int64
	var rssStart int64
	start := time.Now()
	for time.Since(start) < 10*time.Second {
		total = s.ask(500)
		if rssStart == 0 && time.Since(start) > 2*time.Second {
			rssStart, _ = rssKiB(s.cmd.Process.Pid)
		}
	}
	rssEnd, _ := rssKiB(s.cmd.Process.Pid)
	close(stop)
	served := 0
	for c := 0; c < 4; c++ {
		r := <-results
		served += r.ok
		for _, b := range r.bad {
			t.Errorf("request failed under load: %s", b)
		}
	}
	if served == 0 {
		t.Fatal("no request was served: the test proves nothing")
	}
	t.Logf("%d requests served in 10 s; work called %d times; patchprof RSS %d KiB after 2 s, %d KiB at the end", served, total, rssStart, rssEnd)
	if rssStart > 0 && rssEnd > rssStart+32<<10 {
		t.Errorf("patchprof's memory grew from %d KiB to %d KiB under load", rssStart, rssEnd)
	}
	s.finish(total)
}
