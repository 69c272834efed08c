package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// The configurations, in the order they run in each repetition and appear
// in the table.
const (
	cfgNative = "native"
	// cfgFloor is the workload under cmd/patchprof-bench/floor, a Go ptrace tracer
	// that does nothing else: the floor of any tool of patchprof's shape.
	cfgFloor     = "floor"
	cfgGcov      = "gcov"
	cfgCallgrind = "callgrind"
	cfgUftrace   = "uftrace"
	cfgClassic   = "classic"
	cfgXOL       = "xol"
	cfgJump      = "jump"
	// cfgJumpTime is the in-process engine with --time: what sampling
	// costs beside counting.
	cfgJumpTime = "jump+time"
	// cfgJumpCache is the in-process engine with a warm analysis cache:
	// a second run on an unchanged program. Every other patchprof
	// configuration runs with an empty cache, a first run.
	cfgJumpCache = "jump+cache"
	// cfgJumpCalls is the in-process engine with --calls added to the
	// workload's mode: what the call graph costs beside counting.
	cfgJumpCalls = "jump+calls"
)

// allConfigs lists every configuration in table order.
var allConfigs = []string{cfgNative, cfgFloor, cfgGcov, cfgCallgrind, cfgUftrace, cfgClassic, cfgXOL, cfgJump, cfgJumpCalls, cfgJumpCache, cfgJumpTime}

// isEngine reports whether a configuration is a patchprof engine.
func isEngine(cfg string) bool {
	return cfg == cfgClassic || cfg == cfgXOL || cfg == cfgJump || cfg == cfgJumpCalls || cfg == cfgJumpCache || cfg == cfgJumpTime
}

// isOurs reports whether a configuration runs the bench's own code
// (patchprof or the floor), whose failed run is a problem to report, where
// another tool's failure is its own.
func isOurs(cfg string) bool {
	return isEngine(cfg) || cfg == cfgFloor
}

// Options are the command's settings, from its flags.
type Options struct {
	// Reps is how many times each configuration runs.
	Reps int
	// Workloads and Configs name what runs, in table order.
	Workloads, Configs []string
	// Skip holds "workload:config" pairs that do not run.
	Skip map[string]bool
	// Timeout bounds one run; a configuration that exceeds it once is
	// shown as ">Timeout" and not run again.
	Timeout time.Duration
	// PatchprofFlags are added to every patchprof run (say --pin=false).
	PatchprofFlags []string
	// Keep leaves the temporary directory in place, for a look at the
	// builds, reports and saved profiles.
	Keep bool
	// ServerRequests and ServerConns are the load on a server in each of
	// its phases: that many requests over that many connections.
	ServerRequests, ServerConns int
	// WatchWindow is how long the watch of idle processes is measured
	// each round.
	WatchWindow time.Duration
}

// parseOptions reads the flags; known is the list of workload names.
func parseOptions(args []string, known []string, stderr io.Writer) (*Options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &Options{}
	var workloads, configs, skip, extra string
	fs.IntVar(&o.Reps, "n", 5, "run each configuration `N` times, interleaved")
	fs.StringVar(&workloads, "workloads", strings.Join(known, ","), "comma-separated `LIST` of workloads")
	fs.StringVar(&configs, "configs", strings.Join(allConfigs, ","), "comma-separated `LIST` of configurations")
	fs.StringVar(&skip, "skip", "", "comma-separated `LIST` of workload:config pairs not to run (say fib:classic)")
	fs.DurationVar(&o.Timeout, "timeout", 120*time.Second, "bound on one run: a configuration that exceeds it is shown as >`D` and not run again")
	fs.StringVar(&extra, "patchprof-flags", "", "space-separated `FLAGS` added to every patchprof run (say --pin=false)")
	fs.DurationVar(&o.WatchWindow, "watch-window", 20*time.Second, "the watch of idle processes: its CPU is measured over `D` each round")
	fs.IntVar(&o.ServerRequests, "server-requests", 20000, "the servers' load: `N` requests in each phase (before, attached, after)")
	fs.IntVar(&o.ServerConns, "server-conns", 4, "the servers' load: over `N` keep-alive connections side by side")
	fs.BoolVar(&o.Keep, "keep", false, "keep the temporary directory (builds, reports, saved profiles)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./cmd/patchprof-bench [flags]\n\nworkloads: %s\nconfigurations: %s\n\n",
			strings.Join(known, ", "), strings.Join(allConfigs, ", "))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: bench takes only flags", fs.Arg(0))
	}
	if o.Reps < 1 {
		return nil, fmt.Errorf("-n %d: want at least 1", o.Reps)
	}
	if o.ServerConns < 1 || o.ServerRequests < o.ServerConns {
		return nil, fmt.Errorf("-server-requests %d -server-conns %d: want at least one connection and a request a connection", o.ServerRequests, o.ServerConns)
	}
	if o.Timeout <= 0 {
		return nil, fmt.Errorf("-timeout %v: want a positive duration", o.Timeout)
	}
	var err error
	if o.Workloads, err = parseList("-workloads", workloads, known); err != nil {
		return nil, err
	}
	if o.Configs, err = parseList("-configs", configs, allConfigs); err != nil {
		return nil, err
	}
	o.Skip = make(map[string]bool)
	for _, pair := range splitList(skip) {
		w, c, ok := strings.Cut(pair, ":")
		if !ok || !slices.Contains(known, w) || !slices.Contains(allConfigs, c) {
			return nil, fmt.Errorf("-skip %q: want WORKLOAD:CONFIG, a workload of %s and a configuration of %s",
				pair, strings.Join(known, ","), strings.Join(allConfigs, ","))
		}
		o.Skip[pair] = true
	}
	o.PatchprofFlags = strings.Fields(extra)
	return o, nil
}

// parseList splits a comma-separated list and checks every name is known;
// the result keeps the order of known, without duplicates.
func parseList(flagName, s string, known []string) ([]string, error) {
	names := splitList(s)
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: empty list: want some of %s", flagName, strings.Join(known, ","))
	}
	for _, n := range names {
		if !slices.Contains(known, n) {
			return nil, fmt.Errorf("%s: unknown name %q: want some of %s", flagName, n, strings.Join(known, ","))
		}
	}
	var out []string
	for _, k := range known {
		if slices.Contains(names, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

// splitList splits a comma-separated list, dropping empty items and spaces.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
