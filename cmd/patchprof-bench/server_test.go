package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestShare(t *testing.T) {
	for _, tc := range []struct{ n, conns int }{{10, 4}, {8, 4}, {3, 3}, {20000, 7}} {
		total := 0
		for i := range tc.conns {
			s := share(tc.n, tc.conns, i)
			if s < tc.n/tc.conns || s > tc.n/tc.conns+1 {
				t.Errorf("share(%d, %d, %d) = %d", tc.n, tc.conns, i, s)
			}
			total += s
		}
		if total != tc.n {
			t.Errorf("shares of %d over %d add up to %d", tc.n, tc.conns, total)
		}
	}
}

// TestLoad: every request the load makes reaches the handler once, over
// keep-alive connections, and the result counts them all.
func TestLoad(t *testing.T) {
	var calls atomic.Int64
	conns := make(map[string]bool)
	connCh := make(chan string, 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		connCh <- r.RemoteAddr
		io.WriteString(w, "hello\n")
	}))
	defer srv.Close()
	l := Load{Addr: strings.TrimPrefix(srv.URL, "http://"), Conns: 3, Requests: 301, Body: "hello\n"}
	res, err := l.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	close(connCh)
	for c := range connCh {
		conns[c] = true
	}
	if res.Done != 301 || calls.Load() != 301 || len(conns) != 3 {
		t.Errorf("load: %d answered, %d handler calls over %d connections; want 301, 301, 3", res.Done, calls.Load(), len(conns))
	}
	if res.Elapsed <= 0 || res.RPS() <= 0 {
		t.Errorf("load: elapsed %v, %v req/s", res.Elapsed, res.RPS())
	}
}

// TestLoadWrongAnswer: a wrong body, a wrong status or a closed connection
// stops the load with an error.
func TestLoadWrongAnswer(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"body":   func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "bye\n") },
		"status": func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "hello", http.StatusTeapot) },
		"close": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Connection", "close")
			io.WriteString(w, "hello\n")
		},
	} {
		srv := httptest.NewServer(h)
		l := Load{Addr: strings.TrimPrefix(srv.URL, "http://"), Conns: 2, Requests: 10, Body: "hello\n"}
		if res, err := l.run(context.Background()); err == nil || res.Done == 10 {
			t.Errorf("%s: %d answered, error %v; want an error", name, res.Done, err)
		}
		srv.Close()
	}
	if _, err := (Load{Addr: "127.0.0.1:1", Conns: 2, Requests: 1}).run(context.Background()); err == nil {
		t.Error("fewer requests than connections: no error")
	}
}

// TestLoadTimeout: a server that does not answer stops the load at the
// context's end.
func TestLoadTimeout(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-block }))
	defer srv.Close()
	defer close(block)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	l := Load{Addr: strings.TrimPrefix(srv.URL, "http://"), Conns: 2, Requests: 4, Body: "hello\n"}
	if res, err := l.run(ctx); err == nil || res.Done != 0 {
		t.Errorf("blocked server: %d answered, error %v", res.Done, err)
	}
}

func TestParseMapping(t *testing.T) {
	maps := `55d0c2a00000-55d0c2a01000 r--p 00000000 fe:01 1234 /tmp/cserver
55d0c2a01000-55d0c2a02000 r-xp 00001000 fe:01 1234 /tmp/cserver
7f0000000000-7f0000021000 rw-p 00000000 00:00 0 
7f1111000000-7f1111002000 r-xp 00000000 00:00 0
7ffd1000000-7ffd1002000 r-xp 00000000 00:00 0 [vdso]
7f2222000000-7f2222100000 r-xp 00026000 fe:01 99 /dir with space/libc.so.6
`
	lines, ms, err := codeMappings(maps)
	if err != nil {
		t.Fatal(err)
	}
	want := []Mapping{
		{Lo: 0x55d0c2a01000, Hi: 0x55d0c2a02000, Offset: 0x1000, Perms: "r-xp", Path: "/tmp/cserver"},
		{Lo: 0x7f1111000000, Hi: 0x7f1111002000, Perms: "r-xp"},
		{Lo: 0x7ffd1000000, Hi: 0x7ffd1002000, Perms: "r-xp", Path: "[vdso]"},
		{Lo: 0x7f2222000000, Hi: 0x7f2222100000, Offset: 0x26000, Perms: "r-xp", Path: "/dir with space/libc.so.6"},
	}
	if len(ms) != len(want) || len(lines) != len(want) {
		t.Fatalf("codeMappings: %+v", ms)
	}
	for i := range want {
		if ms[i] != want[i] {
			t.Errorf("mapping %d: %+v, want %+v", i, ms[i], want[i])
		}
	}
	for _, bad := range []string{"", "x r-xp 0 0 0", "2000-1000 r-xp 0 fe:01 1", "1000-2000 r-xp zz fe:01 1", "1000-2000 r-xp"} {
		if _, err := parseMapping(bad); err == nil {
			t.Errorf("parseMapping(%q): no error", bad)
		}
	}
}

func TestServerTable(t *testing.T) {
	ms := []ServerMeasure{
		// A change is the median of the rounds' changes (-95%, -90%,
		// -80%; -5%, -30%, +100%), not the change of the medians.
		{Config: cfgJump, Label: "jump", Before: []float64{20000, 30000, 10000}, Attached: []float64{1000, 3000, 2000}, After: []float64{19000, 21000, 20000}},
		{Config: cfgXOL, Label: "xol", Before: []float64{20000}, TimedOut: true},
		{Config: cfgClassic, Label: "classic", Note: "skipped (-skip)"},
	}
	var b strings.Builder
	if err := writeServerTable(&b, serverRows("C server", ms)); err != nil {
		t.Fatal(err)
	}
	want := `| server | configuration | requests/s before | attached | change | after detach | change |
| --- | --- | ---: | ---: | ---: | ---: | ---: |
| C server | jump | 20,000 | 2,000 | -90.0% | 20,000 | -5.0% |
|  | xol | 20,000 | timed out |  | - |  |
|  | classic | skipped (-skip) |  |  |  |  |
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestFormatRate(t *testing.T) {
	for _, tc := range []struct {
		r    float64
		want string
	}{
		{28812.4, "28,800"}, {1234567, "1,230,000"}, {1239, "1,240"}, {999.6, "1,000"}, {512.3, "512"},
		{42.26, "42.3"}, {3.14159, "3.14"},
	} {
		if got := formatRate(tc.r); got != tc.want {
			t.Errorf("formatRate(%v) = %q, want %q", tc.r, got, tc.want)
		}
	}
	if got := formatChange(-0.0412); got != "-4.1%" {
		t.Errorf("formatChange: %q", got)
	}
	if got := medianRate([]float64{3, 1, 2, 10}); got != 2.5 {
		t.Errorf("medianRate: %v", got)
	}
}
