package watch

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/patchprof/patchprof/profile"
)

// fakeLive is a watch of fixed records.
type fakeLive struct {
	recs []*Record
	c    Counters
}

func (f fakeLive) Current() []*Record { return f.recs }
func (f fakeLive) Counters() Counters { return f.c }

func TestHandler(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 18, 0, 0, 0, time.UTC)
	live := fakeLive{
		recs: []*Record{
			{Proc: Proc{PID: 10}, Found: t0, Attached: t0, Profile: funcProfile("aa", 3, profile.Exit{Running: true})},
			{Proc: Proc{PID: 11}, Found: t0, Attached: t0, Profile: funcProfile("aa", 4, profile.Exit{Running: true})},
			{Proc: Proc{PID: 12}, Found: t0, Ended: t0, Refused: "process is already traced: 12 is traced by gdb (PID 9)"},
		},
		c: Counters{Watched: 2, Attaches: 2, Failures: map[string]int{ReasonAlreadyTraced: 1}},
	}
	h := NewHandler(live, 10, t0)
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	code, body := get("/metrics")
	for _, want := range []string{
		`patchprof_function_calls_total{module="/srv/api",build_id="aa",function="handle"} 7`,
		"patchprof_watched_processes 2\n", "patchprof_attach_total 2\n",
		`patchprof_attach_failures_total{reason="already_traced"} 1`, `patchprof_attach_failures_total{reason="max_procs"} 0`,
	} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics %d lacks %s:\n%s", code, want, body)
		}
	}
	if code, body := get("/processes"); code != 200 || !strings.Contains(body, `"refused": "process is already traced`) || strings.Count(body, `"watched": true`) != 2 {
		t.Errorf("/processes %d:\n%s", code, body)
	}
	for path, want := range map[string]int{
		"/debug/pprof/counts":        200,
		"/debug/pprof/counts?pid=11": 200,
		"/debug/pprof/counts?pid=12": 404, // refused: no counts
		"/debug/pprof/counts?pid=x":  400,
		"/debug/pprof/counts?sec=1":  400,
		"/nothing":                   404,
	} {
		if code, body := get(path); code != want {
			t.Errorf("%s: status %d, want %d: %s", path, code, want, body)
		}
	}
}
