package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/patchprof/patchprof/output"
	"github.com/patchprof/patchprof/profile"
	"github.com/patchprof/patchprof/profiler"
	"github.com/patchprof/patchprof/serve"
)

// maxTokenSize is the largest --listen-token file patchprof reads: a
// bearer token is a line, not a file of megabytes.
const maxTokenSize = 4 << 10

// listenFlags are the flags of the live endpoints (--listen).
type listenFlags struct {
	addr, tokenFile string
	top             int
	engine          string       // --engine, the label of the sites metric
	token           string       // read from tokenFile by check
	scope           output.Scope // what /metrics lists, as the listing
}

func registerListenFlags(fs *flag.FlagSet) *listenFlags {
	lf := &listenFlags{}
	fs.StringVar(&lf.addr, "listen", "", "while the target runs, serve its counts over HTTP on `ADDR` (:PORT is loopback; HOST:PORT; unix:PATH): /debug/pprof/counts for go tool pprof and continuous profilers, /metrics for Prometheus, /profile.json")
	fs.StringVar(&lf.tokenFile, "listen-token", "", "with --listen: require the bearer token in `FILE` (Authorization: Bearer TOKEN) on every endpoint but /healthz")
	fs.IntVar(&lf.top, "metrics-top", serve.DefaultTopFunctions, "with --listen: how many of the most called functions /metrics lists (`N`)")
	return lf
}

// check checks the flags and reads the token.
func (lf *listenFlags) check() error {
	if lf.addr == "" {
		if lf.tokenFile != "" {
			return failed("--listen-token only applies with --listen ADDR")
		}
		return nil
	}
	if lf.top < 1 {
		return failed("--metrics-top %d: give at least 1", lf.top)
	}
	if lf.tokenFile != "" {
		b, err := readRegular(lf.tokenFile, maxTokenSize)
		if err != nil {
			return failed("--listen-token %s: %v: give a regular file holding the token", lf.tokenFile, cause(err))
		}
		lf.token = strings.TrimSpace(string(b))
		if lf.token == "" || strings.ContainsAny(lf.token, " \t\r\n") {
			return failed("--listen-token %s: the file must hold one token, without spaces", lf.tokenFile)
		}
	}
	return nil
}

// startServe starts the live endpoints of prof when --listen is given. The
// returned function hands them the final profile (nil when the run failed)
// and stops them, letting the requests in flight finish for a moment.
func startServe(lf *listenFlags, prof *profiler.Profiler, stderr io.Writer) (stop func(*profile.Profile), err error) {
	if lf == nil || lf.addr == "" {
		return func(*profile.Profile) {}, nil
	}
	l, public, err := serve.Listen(lf.addr)
	if err != nil {
		return nil, &profiler.UserError{Msg: err.Error()}
	}
	h := serve.NewHandler(serve.Options{Source: prof, Engine: lf.engine, TopFunctions: lf.top, Token: lf.token, Start: time.Now(), Scope: lf.scope})
	s := serve.Serve(l, h)
	if public && lf.token == "" {
		fmt.Fprintf(stderr, "patchprof: warning: --listen %s serves the target's profile to anyone who can reach %s: there is no authentication (add --listen-token FILE, or listen on loopback)\n", lf.addr, l.Addr())
	}
	fmt.Fprintf(stderr, "patchprof: serving the counts at %s\n", s.URL())
	return func(p *profile.Profile) {
		h.Finish(p.Clone()) // the caller saves and writes p meanwhile
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			fmt.Fprintf(stderr, "patchprof: --listen %s: %v\n", lf.addr, err)
		}
	}, nil
}
