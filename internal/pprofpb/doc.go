// Package pprofpb writes pprof profiles: the gzipped protocol buffer of
// github.com/google/pprof/proto/profile.proto that `go tool pprof` and
// continuous profilers read.
//
// It holds only what patchprof writes (sample types, samples, mappings,
// locations with their lines, functions, comments, the period and the
// time window) and only writes. google/pprof's profile package does the
// same and more, but compiles some twenty regular expressions in its
// package initialization, a millisecond of every patchprof run, whatever
// it does; its tests read what this package writes, as the independent
// check.
//
// Files:
//
//	pprofpb.go: Profile and its parts, CheckValid and Write
//	encode.go: Marshal, the protocol buffer encoding
package pprofpb
