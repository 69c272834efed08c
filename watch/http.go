package watch

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/patchprof/patchprof/output"
	"github.com/patchprof/patchprof/profile"
)

// A Live is what the endpoints of a watch read: the records of the
// moment (Watcher.Current) and the totals (Watcher.Counters).
type Live interface {
	Current() []*Record
	Counters() Counters
}

// A Handler serves a watch's counts over HTTP (--listen): /metrics for
// Prometheus, /debug/pprof/counts for pprof (the aggregate, or ?pid=N one
// process), /processes (what is watched, since when, and what was
// refused) and /healthz.
type Handler struct {
	live  Live
	top   int       // functions listed per build in /metrics
	start time.Time // when the watch began
}

// NewHandler returns the Handler of live; /metrics lists the top most
// called functions of each build.
func NewHandler(live Live, top int, start time.Time) *Handler {
	return &Handler{live: live, top: max(top, 1), start: start}
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		httpError(w, http.StatusMethodNotAllowed, "the endpoints are read with GET")
		return
	}
	switch r.URL.Path {
	case "/metrics":
		h.serveMetrics(w)
	case "/debug/pprof/counts":
		h.servePprof(w, r)
	case "/processes":
		h.serveProcesses(w)
	case "/healthz":
		io.WriteString(w, "ok\n")
	default:
		httpError(w, http.StatusNotFound, fmt.Sprintf("no endpoint %s: /metrics, /debug/pprof/counts[?pid=N], /processes, /healthz", r.URL.Path))
	}
}

func httpError(w http.ResponseWriter, code int, msg string) {
	http.Error(w, fmt.Sprintf("%d %s: %s", code, http.StatusText(code), msg), code)
}

// servePprof serves the pprof protobuf of the aggregate of the build
// found last, or with ?pid=N of that process alone.
func (h *Handler) servePprof(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for k := range q {
		if k != "pid" {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("unknown parameter %q: the only one is pid=N", k))
			return
		}
	}
	recs := h.live.Current()
	var p *profile.Profile
	start := h.start
	if s := q.Get("pid"); q.Has("pid") {
		pid, err := strconv.Atoi(s)
		if err != nil {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("pid=%q: give a process ID", s))
			return
		}
		for _, rec := range recs {
			if rec.Proc.PID == pid && rec.Profile != nil {
				p, start = rec.Profile.Clone(), rec.Attached
			}
		}
		if p == nil {
			httpError(w, http.StatusNotFound, fmt.Sprintf("PID %d has no counts in this watch: see /processes", pid))
			return
		}
	} else {
		builds, err := Aggregate(recs)
		if err != nil {
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
		if len(builds) == 0 {
			httpError(w, http.StatusServiceUnavailable, "no process counted yet: see /processes")
			return
		}
		p = builds[len(builds)-1].Profile
	}
	var buf bytes.Buffer
	if err := output.WritePprofWindow(&buf, p, start, time.Now()); err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="counts.pb.gz"`)
	w.Write(buf.Bytes())
}

// A processEntry is one process in /processes.
type processEntry struct {
	PID      int    `json:"pid"`
	Found    string `json:"found"`
	Attached string `json:"attached,omitempty"` // counted from then
	Ended    string `json:"ended,omitempty"`
	Refused  string `json:"refused,omitempty"`
	BuildID  string `json:"build_id,omitempty"`
	Watched  bool   `json:"watched"`
}

// serveProcesses lists every process the watch found, in the order found.
func (h *Handler) serveProcesses(w http.ResponseWriter) {
	recs := h.live.Current()
	out := make([]processEntry, 0, len(recs))
	for _, r := range recs {
		e := processEntry{PID: r.Proc.PID, Found: stamp(r.Found), Refused: r.Refused,
			Watched: !r.Attached.IsZero() && r.Ended.IsZero()}
		if !r.Attached.IsZero() {
			e.Attached = stamp(r.Attached)
		}
		if !r.Ended.IsZero() {
			e.Ended = stamp(r.Ended)
		}
		if r.Profile != nil {
			e.BuildID = r.Profile.BuildID
		}
		out = append(out, e)
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(out)
}

// serveMetrics serves the Prometheus text exposition: each build's
// function calls summed over its processes, past and present, and the
// watch's totals.
func (h *Handler) serveMetrics(w http.ResponseWriter) {
	recs := h.live.Current()
	builds, err := Aggregate(recs)
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	var b bytes.Buffer
	writeMetrics(&b, builds, h.live.Counters(), h.top)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write(b.Bytes())
}

// writeMetrics writes the text exposition format (version 0.0.4) of
// builds and c: the top most called functions of each build.
func writeMetrics(w io.Writer, builds []Build, c Counters, top int) {
	family(w, "patchprof_function_calls_total", "counter",
		fmt.Sprintf("Calls of a function summed over every watched process of its build, past and present, each counted from its attach (the %d most called of each build).", top))
	for _, b := range builds {
		fs := slices.Clone(b.Profile.Functions)
		slices.SortFunc(fs, func(x, y profile.Function) int {
			return cmp.Or(cmp.Compare(y.Count, x.Count), strings.Compare(x.Module, y.Module), strings.Compare(x.Name, y.Name), cmp.Compare(x.Address, y.Address))
		})
		if len(fs) > top {
			fs = fs[:top]
		}
		for _, f := range fs {
			sample(w, "patchprof_function_calls_total", strconv.FormatUint(f.Count, 10),
				"module", b.Profile.ModuleName(f.Module), "build_id", b.Profile.BuildID, "function", f.Name)
		}
	}
	family(w, "patchprof_watched_processes", "gauge", "Processes attached to and counted now.")
	sample(w, "patchprof_watched_processes", strconv.Itoa(c.Watched))
	family(w, "patchprof_attach_total", "counter", "Processes attached to since the watch began.")
	sample(w, "patchprof_attach_total", strconv.Itoa(c.Attaches))
	family(w, "patchprof_attach_failures_total", "counter", "Processes found and not watched, by reason (max_procs, already_traced, not_permitted, gone, other).")
	for _, r := range []string{ReasonMaxProcs, ReasonAlreadyTraced, ReasonNotPermitted, ReasonGone, ReasonOther} {
		sample(w, "patchprof_attach_failures_total", strconv.Itoa(c.Failures[r]), "reason", r)
	}
}

func family(w io.Writer, name, typ, help string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

// labelEscaper escapes a label value: backslash, double quote and line
// feed (the text exposition format).
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// sample writes one sample; labels are name, value pairs.
func sample(w io.Writer, name, value string, labels ...string) {
	var b strings.Builder
	b.WriteString(name)
	if len(labels) > 0 {
		b.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%s=\"%s\"", labels[i], labelEscaper.Replace(labels[i+1]))
		}
		b.WriteByte('}')
	}
	b.WriteString(" " + value + "\n")
	io.WriteString(w, b.String())
}
