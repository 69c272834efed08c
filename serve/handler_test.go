package serve

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	pprof "github.com/google/pprof/profile"

	"github.com/patchprof/patchprof/output"
	"github.com/patchprof/patchprof/profile"
)

const src = "/home/ann/prog/a.c"

// fakeSource is a run in which work is called step times between two
// snapshots: the n-th snapshot counts n*step calls of work (and as many
// entries of its line and hits of its site), main one call.
type fakeSource struct {
	mu    sync.Mutex
	n     uint64
	step  uint64
	block chan struct{} // if not nil, Snapshot waits for it
}

func (s *fakeSource) Snapshot(ctx context.Context) *profile.Profile {
	if s.block != nil {
		select {
		case <-s.block:
		case <-ctx.Done():
			return nil
		}
	}
	s.mu.Lock()
	s.n++
	n := s.n
	s.mu.Unlock()
	return example(n * s.step)
}

// taken is the number of snapshots taken.
func (s *fakeSource) taken() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// example is the profile of a run that called work calls times.
func example(calls uint64) *profile.Profile {
	return &profile.Profile{
		Version:    profile.Version,
		Executable: "/home/ann/prog/a",
		Args:       []string{"./a"},
		Mode:       profile.ModeLinesFuncs,
		Exit:       profile.Exit{Running: true},
		Lines: []profile.Line{
			{File: src, Line: 3, Count: 1, Function: "main"},
			{File: src, Line: 8, Count: calls, Function: "work"},
			{File: src, Line: 12, Count: 0, Function: "never"},
		},
		Functions: []profile.Function{
			{Name: "main", Count: 1, File: src, Line: 2, Address: 0x401126},
			{Name: "work", Count: calls, File: src, Line: 7, Address: 0x401160},
			{Name: "never", Count: 0, File: src, Line: 11, Address: 0x401190},
		},
		Sites: []profile.Site{
			{Address: 0x401126, Count: 1, Kind: profile.KindLineFunc},
			{Address: 0x401160, Count: calls, Kind: profile.KindLineFunc},
			{Address: 0x401190, Count: 0, Kind: profile.KindLineFunc},
		},
	}
}

func get(t *testing.T, h http.Handler, target string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// calls returns the calls sample of each function of a pprof profile.
func calls(t *testing.T, data []byte) (*pprof.Profile, map[string]int64) {
	t.Helper()
	p, err := pprof.ParseData(data)
	if err != nil {
		t.Fatalf("not a pprof profile: %v", err)
	}
	if p.SampleType[0].Type != "calls" {
		t.Fatalf("first sample type %q, want calls", p.SampleType[0].Type)
	}
	out := map[string]int64{}
	for _, s := range p.Sample {
		if v := s.Value[0]; v != 0 {
			out[s.Location[0].Line[0].Function.Name] += v
		}
	}
	return p, out
}

func TestPprofWhole(t *testing.T) {
	start := time.Now().Add(-time.Minute)
	h := NewHandler(Options{Source: &fakeSource{step: 5}, Start: start})
	w := get(t, h, "/debug/pprof/counts")
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	p, got := calls(t, w.Body.Bytes())
	if want := map[string]int64{"main": 1, "work": 5}; !maps.Equal(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
	if p.TimeNanos != start.UnixNano() || p.DurationNanos < int64(time.Minute) {
		t.Errorf("time %d duration %v, want %d and at least a minute", p.TimeNanos, time.Duration(p.DurationNanos), start.UnixNano())
	}
}

// TestPprofDelta: ?seconds=1 is the calls made between the snapshot taken
// when the request came and the one a second later: exactly one step.
func TestPprofDelta(t *testing.T) {
	h := NewHandler(Options{Source: &fakeSource{step: 7}})
	begin := time.Now()
	w := get(t, h, "/debug/pprof/counts?seconds=1")
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if el := time.Since(begin); el < time.Second {
		t.Errorf("answered after %v, before the window of 1s ended", el)
	}
	p, got := calls(t, w.Body.Bytes())
	if want := map[string]int64{"work": 7}; !maps.Equal(got, want) {
		t.Errorf("calls in the window %v, want %v (main ran before it)", got, want)
	}
	// The upper bound tells the window from a duration since another
	// start; a loaded machine may stretch the second, not by minutes.
	if d := time.Duration(p.DurationNanos); d < time.Second || d > 2*time.Minute {
		t.Errorf("duration %v, want the window's second", d)
	}
}

// TestPprofDeltaFinish: a window the run's end cuts short ends with it,
// counting up to the final profile. The run ends once the window's first
// snapshot is taken.
func TestPprofDeltaFinish(t *testing.T) {
	src := &fakeSource{step: 7}
	h := NewHandler(Options{Source: src})
	go func() {
		for src.taken() == 0 {
			time.Sleep(time.Millisecond)
		}
		fin := example(100)
		fin.Exit = profile.Exit{Code: new(int)}
		h.Finish(fin)
	}()
	begin := time.Now()
	w := get(t, h, "/debug/pprof/counts?seconds=60")
	if el := time.Since(begin); el > 30*time.Second {
		t.Errorf("answered after %v: the run's end did not end the window", el)
	}
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if _, got := calls(t, w.Body.Bytes()); !maps.Equal(got, map[string]int64{"work": 93}) {
		t.Errorf("calls in the window %v, want work 93 (100 at the end, 7 at the start)", got)
	}
}

func TestBadRequests(t *testing.T) {
	h := NewHandler(Options{Source: &fakeSource{step: 1}})
	for _, c := range []struct {
		method, target string
		code           int
		msg            string
	}{
		{"GET", "/nothing", 404, "no endpoint /nothing: see / for the list"},
		{"GET", "/debug/pprof/profile", 404, "no endpoint /debug/pprof/profile"},
		{"POST", "/metrics", 405, "method POST not allowed"},
		{"DELETE", "/", 405, "method DELETE not allowed"},
		{"GET", "/debug/pprof/counts?seconds=0", 400, `seconds="0": give a whole number of seconds from 1 to 3600`},
		{"GET", "/debug/pprof/counts?seconds=-3", 400, `seconds="-3": give a whole number`},
		{"GET", "/debug/pprof/counts?seconds=abc", 400, `seconds="abc": give a whole number`},
		{"GET", "/debug/pprof/counts?seconds=2.5", 400, `seconds="2.5": give a whole number`},
		{"GET", "/debug/pprof/counts?seconds=", 400, `seconds="": give a whole number`},
		{"GET", "/debug/pprof/counts?seconds=3601", 400, `seconds="3601": give a whole number of seconds from 1 to 3600`},
		{"GET", "/debug/pprof/counts?seconds=99999999999999999999999", 400, `give a whole number`},
		{"GET", "/debug/pprof/counts?secs=2", 400, `unknown parameter "secs": the only one is seconds=N`},
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.code || !strings.Contains(w.Body.String(), c.msg) {
			t.Errorf("%s %s: %d %q, want %d containing %q", c.method, c.target, w.Code, w.Body, c.code, c.msg)
		}
	}
}

func TestProfileJSON(t *testing.T) {
	h := NewHandler(Options{Source: &fakeSource{step: 3}})
	w := get(t, h, "/profile.json")
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, type %q: %s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	p, err := profile.Decode(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Exit.Running || p.Functions[1].Name != "work" || p.Functions[1].Count != 3 {
		t.Errorf("exit %+v, functions %+v; want running, work 3", p.Exit, p.Functions)
	}
	fin := example(10)
	fin.Exit = profile.Exit{Detached: true}
	h.Finish(fin)
	p, err = profile.Decode(get(t, h, "/profile.json").Body)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Exit.Detached || p.Exit.Running || p.Functions[1].Count != 10 {
		t.Errorf("after Finish: exit %+v, functions %+v; want the final profile", p.Exit, p.Functions)
	}
}

func TestEnded(t *testing.T) {
	h := NewHandler(Options{Source: &fakeSource{step: 3}})
	h.Finish(nil) // the run failed
	for _, path := range []string{"/profile.json", "/metrics", "/debug/pprof/counts"} {
		if w := get(t, h, path); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "the profiled run has ended") {
			t.Errorf("%s: %d %q, want 503 saying the run ended", path, w.Code, w.Body)
		}
	}
	if w := get(t, h, "/healthz"); w.Code != 200 || w.Body.String() != "ok\n" {
		t.Errorf("/healthz: %d %q", w.Code, w.Body)
	}
}

func TestIndex(t *testing.T) {
	w := get(t, NewHandler(Options{Source: &fakeSource{}}), "/")
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("index: %d %q", w.Code, w.Header())
	}
	for _, e := range endpoints {
		if !strings.Contains(w.Body.String(), `<a href="`+e.path+`">`) {
			t.Errorf("index does not link %s:\n%s", e.path, w.Body)
		}
	}
}

func TestToken(t *testing.T) {
	h := NewHandler(Options{Source: &fakeSource{step: 1}, Token: "s3cret"})
	for _, path := range []string{"/", "/metrics", "/profile.json", "/debug/pprof/counts"} {
		for _, auth := range []string{"", "Bearer wrong", "Bearer s3cre", "s3cret", "Basic s3cret"} {
			w := get(t, h, path, "Authorization", auth)
			if w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") == "" ||
				!strings.Contains(w.Body.String(), "missing or wrong bearer token") {
				t.Errorf("%s with %q: %d %q, want 401", path, auth, w.Code, w.Body)
			}
		}
		if w := get(t, h, path, "Authorization", "Bearer s3cret"); w.Code != 200 {
			t.Errorf("%s with the token: %d %q", path, w.Code, w.Body)
		}
	}
	if w := get(t, h, "/healthz"); w.Code != 200 {
		t.Errorf("/healthz without the token: %d, want 200 (liveness probes carry none)", w.Code)
	}
	if w := get(t, h, "/nothing"); w.Code != 404 {
		t.Errorf("/nothing: %d, want 404", w.Code)
	}
}

// TestInFlight: requests beyond MaxInFlight get 503 at once; the others are
// served when the counts come.
func TestInFlight(t *testing.T) {
	src := &fakeSource{step: 1, block: make(chan struct{})}
	h := NewHandler(Options{Source: src, MaxInFlight: 2})
	srv := httptest.NewServer(h)
	defer srv.Close()
	var wg sync.WaitGroup
	codes := make(chan int, 2)
	for range 2 {
		wg.Go(func() {
			resp, err := http.Get(srv.URL + "/metrics")
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	// Wait until both hold their slot.
	for deadline := time.Now().Add(2 * time.Minute); len(h.slots) < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the two requests never took their slots")
		}
	}
	resp, err := http.Get(srv.URL + "/profile.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !bytes.Contains(body, []byte("too many requests at once (2)")) {
		t.Errorf("third request: %d %q, want 503 too many", resp.StatusCode, body)
	}
	if resp, err := http.Get(srv.URL + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Errorf("/healthz while busy: %v %v", resp, err)
	}
	close(src.block)
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != 200 {
			t.Errorf("a waiting request got %d, want 200", c)
		}
	}
}

// fixedSource gives the same profile at every snapshot.
type fixedSource struct{ p *profile.Profile }

func (s fixedSource) Snapshot(context.Context) *profile.Profile { return s.p.Clone() }

// TestMetricsScope: /metrics lists the functions the listing shows: the C
// start-up functions (no source lines) only with Scope.AllFuncs.
func TestMetricsScope(t *testing.T) {
	p := example(4)
	p.Functions = append(p.Functions,
		profile.Function{Name: "_start", Count: 1, Address: 0x401000},
		profile.Function{Name: "frame_dummy", Count: 1, Address: 0x401100})
	for _, all := range []bool{false, true} {
		h := NewHandler(Options{Source: fixedSource{p}, Scope: output.Scope{AllFuncs: all}})
		body := get(t, h, "/metrics").Body.String()
		for _, name := range []string{"_start", "frame_dummy"} {
			if got := strings.Contains(body, `function="`+name+`"`); got != all {
				t.Errorf("AllFuncs %v: /metrics lists %s: %v, want %v", all, name, got, all)
			}
		}
		if !strings.Contains(body, `patchprof_function_calls_total{module="/home/ann/prog/a",function="work"} 4`) {
			t.Errorf("AllFuncs %v: /metrics lacks work's 4 calls:\n%s", all, body)
		}
	}
}
