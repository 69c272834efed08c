// Package serve publishes a profile that is still being counted over HTTP,
// where the tools operators already run look for it: `go tool pprof URL`
// and continuous profilers (Pyroscope, Parca) pull pprof protobufs from
// /debug/pprof/counts, Prometheus scrapes /metrics, and /profile.json is
// the saved-profile JSON of the moment.
//
// A Handler reads the counts only through a Source (profiler.Profiler's
// Snapshot): each request gets a consistent copy, taken between two stops
// of the target, so reading never stops the target and never loses or
// double-counts a hit. A delta (?seconds=N) is the difference of two such
// copies. Listen opens the address (loopback unless another host is given,
// or a Unix socket) and Server runs the handler until the profile ends.
//
// The package owns the endpoints, their formats and the listening policy;
// it does not own the counts (package profiler), the profile's schema
// (package profile) or the pprof layout (output.WritePprof). It is pure Go
// and builds on any OS.
//
// Files:
//
//	handler.go: Source, Options, Handler: the endpoints and their index,
//	    the bearer token, the bound on requests in flight, pprof and JSON
//	delta.go: Delta, the counts one profile added since another
//	metrics.go: /metrics in the Prometheus text exposition format
//	cpu_unix.go, cpu_other.go: patchprof's own CPU time for /metrics
//	    (getrusage where there is one)
//	listen.go: Listen and its policy, ListenError, Server
package serve
