package serve

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/patchprof/patchprof/output"
	"github.com/patchprof/patchprof/profile"
)

// A Source gives the profile of the moment. Snapshot returns a profile the
// caller owns (it may sort or change it), or nil when the run has ended or
// ctx is done first. profiler.Profiler is one.
type Source interface {
	Snapshot(ctx context.Context) *profile.Profile
}

// Defaults of Options.
const (
	// DefaultTopFunctions is how many functions /metrics reports: the
	// cardinality of patchprof_function_calls_total stays bounded.
	DefaultTopFunctions = 200
	// DefaultMaxSeconds is the longest delta window ?seconds= accepts.
	DefaultMaxSeconds = 3600
	// DefaultMaxInFlight bounds the requests that hold a profile at once.
	DefaultMaxInFlight = 32
)

// Options configure a Handler.
type Options struct {
	// Source gives the counts; required.
	Source Source
	// Engine names how hits are served (monitor.EngineXOL, ...), the
	// engine label of patchprof_sites_planted.
	Engine string
	// TopFunctions is how many of the most called functions /metrics
	// lists (0: DefaultTopFunctions).
	TopFunctions int
	// Token, when not empty, is the bearer token every request but
	// /healthz must carry (Authorization: Bearer TOKEN).
	Token string
	// MaxSeconds is the longest ?seconds= window (0: DefaultMaxSeconds).
	MaxSeconds int
	// MaxInFlight bounds the concurrent requests that read the counts;
	// more get 503 (0: DefaultMaxInFlight).
	MaxInFlight int
	// Start is when counting began: the duration of a whole-run pprof
	// profile. Zero leaves it out.
	Start time.Time
	// Scope is what /metrics lists of the functions, as the listing
	// shows them: the C start-up functions and those of system sources
	// left out unless it says otherwise.
	Scope output.Scope
}

// A Handler serves the endpoints of a profile being counted. Finish hands
// it the final profile when the run has ended.
type Handler struct {
	o     Options
	slots chan struct{} // one per request reading the counts

	once  sync.Once
	ended chan struct{} // closed by Finish
	final *profile.Profile
	// windows counts the delta windows open: first counts read, the
	// second not yet (patchprof_delta_windows_open).
	windows atomic.Int64
}

// NewHandler returns the Handler of o.
func NewHandler(o Options) *Handler {
	if o.TopFunctions <= 0 {
		o.TopFunctions = DefaultTopFunctions
	}
	if o.MaxSeconds <= 0 {
		o.MaxSeconds = DefaultMaxSeconds
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	return &Handler{o: o, slots: make(chan struct{}, o.MaxInFlight), ended: make(chan struct{})}
}

// Finish records the final profile of the run (nil when it failed): the
// endpoints serve it from now on, /metrics says the target is no longer
// running, and a delta still waiting ends now, with what it counted.
// Only the first call counts.
func (h *Handler) Finish(p *profile.Profile) {
	h.once.Do(func() {
		h.final = p
		close(h.ended)
	})
}

// An endpoint is one path the Handler serves.
type endpoint struct {
	path, about string
	serve       func(h *Handler, w http.ResponseWriter, r *http.Request)
	counts      bool // reads the counts: takes a slot, needs the token
}

var endpoints = []endpoint{
	{"/debug/pprof/counts", "pprof protobuf of the counts (calls, line_entries); ?seconds=N: the counts added during the next N seconds", (*Handler).servePprof, true},
	{"/profile.json", "the saved-profile JSON of the moment (exit.running while the target runs)", (*Handler).serveJSON, true},
	{"/metrics", "Prometheus text exposition: calls (and with --time CPU time) of the most called functions, sites, hits, target state, patchprof's CPU and memory", (*Handler).serveMetrics, true},
	{"/healthz", "ok while patchprof serves", (*Handler).serveHealth, false},
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		httpError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed: the endpoints are read with GET", r.Method))
		return
	}
	if r.URL.Path == "/" {
		if !h.authorized(w, r) {
			return
		}
		h.serveIndex(w)
		return
	}
	for _, e := range endpoints {
		if r.URL.Path != e.path {
			continue
		}
		if e.counts {
			if !h.authorized(w, r) {
				return
			}
			select {
			case h.slots <- struct{}{}:
				defer func() { <-h.slots }()
			default:
				w.Header().Set("Retry-After", "1")
				httpError(w, http.StatusServiceUnavailable, fmt.Sprintf("too many requests at once (%d): retry", cap(h.slots)))
				return
			}
		}
		e.serve(h, w, r)
		return
	}
	httpError(w, http.StatusNotFound, fmt.Sprintf("no endpoint %s: see / for the list", r.URL.Path))
}

// authorized checks the bearer token, answering 401 when it is wrong.
func (h *Handler) authorized(w http.ResponseWriter, r *http.Request) bool {
	if h.o.Token == "" {
		return true
	}
	got := r.Header.Get("Authorization")
	want := "Bearer " + h.o.Token
	// Constant time: the comparison must not tell how much of a guess was
	// right.
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1 {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="patchprof"`)
	httpError(w, http.StatusUnauthorized, "missing or wrong bearer token: send Authorization: Bearer TOKEN (the --listen-token file)")
	return false
}

func httpError(w http.ResponseWriter, code int, msg string) {
	http.Error(w, fmt.Sprintf("%d %s: %s", code, http.StatusText(code), msg), code)
}

// errEnded is the error of a request that found no profile: the run ended
// without one.
var errEnded = errors.New("the profiled run has ended and left no profile")

// profile returns a profile of the moment the caller owns: a snapshot while
// the target runs, then the final profile.
func (h *Handler) profile(ctx context.Context) (*profile.Profile, error) {
	select {
	case <-h.ended:
		return h.finalProfile()
	default:
	}
	if p := h.o.Source.Snapshot(ctx); p != nil {
		return p, nil
	}
	// The run has ended (or ctx is done): the final profile follows.
	select {
	case <-h.ended:
		return h.finalProfile()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (h *Handler) finalProfile() (*profile.Profile, error) {
	if h.final == nil {
		return nil, errEnded
	}
	return h.final.Clone(), nil
}

// read writes the error of a failed profile read and reports whether p is
// there.
func readFailed(w http.ResponseWriter, err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, errEnded) {
		httpError(w, http.StatusServiceUnavailable, err.Error())
	} else {
		// The client went away or its deadline passed: nobody reads this.
		httpError(w, http.StatusServiceUnavailable, "request ended before the counts were read: "+err.Error())
	}
	return true
}

// servePprof serves the counts as a pprof protobuf: all of them, or with
// ?seconds=N those added during the next N seconds.
func (h *Handler) servePprof(w http.ResponseWriter, r *http.Request) {
	var window time.Duration
	q := r.URL.Query()
	for k := range q {
		if k != "seconds" {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("unknown parameter %q: the only one is seconds=N", k))
			return
		}
	}
	if s := q.Get("seconds"); q.Has("seconds") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > h.o.MaxSeconds {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("seconds=%q: give a whole number of seconds from 1 to %d", s, h.o.MaxSeconds))
			return
		}
		window = time.Duration(n) * time.Second
		// The answer comes after the window: the server's write deadline
		// must outlast it.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(window + writeTimeout))
	}
	ctx := r.Context()
	p, err := h.profile(ctx)
	if readFailed(w, err) {
		return
	}
	start, end := h.o.Start, time.Now()
	if window > 0 {
		start = end
		h.windows.Add(1)
		defer h.windows.Add(-1)
		t := time.NewTimer(window)
		select {
		case <-t.C:
		case <-h.ended: // the run ended first: the window ends with it
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			return
		}
		cur, err := h.profile(ctx)
		if readFailed(w, err) {
			return
		}
		p, end = Delta(p, cur), time.Now()
	}
	var buf bytes.Buffer
	if err := output.WritePprofWindow(&buf, p, start, end); err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	data := buf.Bytes()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="counts.pb.gz"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Write(data)
}

// serveJSON serves the saved-profile JSON of the moment.
func (h *Handler) serveJSON(w http.ResponseWriter, r *http.Request) {
	p, err := h.profile(r.Context())
	if readFailed(w, err) {
		return
	}
	var buf bytes.Buffer
	if err := p.Encode(&buf); err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.Write(buf.Bytes())
}

// serveMetrics serves the Prometheus text exposition (see writeMetrics).
func (h *Handler) serveMetrics(w http.ResponseWriter, r *http.Request) {
	p, err := h.profile(r.Context())
	if readFailed(w, err) {
		return
	}
	running := true
	select {
	case <-h.ended:
		running = false
	default:
	}
	var buf bytes.Buffer
	writeMetrics(&buf, h.o.Scope.Apply(p), metricsOptions{engine: h.o.Engine, top: h.o.TopFunctions, running: running, windows: h.windows.Load()})
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.Write(buf.Bytes())
}

func (h *Handler) serveHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

func (h *Handler) serveIndex(w http.ResponseWriter) {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html><head><title>patchprof</title></head><body>\n<h1>patchprof</h1>\n<ul>\n")
	for _, e := range endpoints {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a>: %s</li>\n", e.path, e.path, html.EscapeString(e.about))
	}
	b.WriteString("</ul>\n</body></html>\n")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}
