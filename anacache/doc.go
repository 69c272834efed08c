// Package anacache keeps the analysis of executables between runs: what
// patchprof reads and computes from a file's bytes alone (its line table,
// its functions' DWARF descriptions), stored under a key that names the
// file's contents, so that a second run on an unchanged program skips the
// work.
//
// An entry is one file in the cache directory ($XDG_CACHE_HOME/patchprof,
// else ~/.cache/patchprof), named by its key's SHA-256. It holds a header
// (a magic string, the format version, the key's digest, the payload's
// length and CRC-32C) and the payload. An entry is written to a temporary
// file beside it and renamed into place, so a reader sees the old entry,
// the new one or none, never half of one, and two runs filling the same
// entry at once both succeed (the last rename wins; both wrote the same
// bytes). An entry whose header or checksum does not match is a miss: it
// is removed, and Get says why in one line, so a caller can note it and go
// on computing.
//
// A key (Key) is built from what the payload depends on: the kind of
// analysis and its options, the identity of the code that computed it
// (SelfID: the running executable's build ID, so a rebuilt patchprof never
// reads an older one's entries), and the file's identity: its ELF build ID
// and size, or, without a build ID, its path, size and modification time.
// A rebuilt program gets a new key; the stale entry is never read again
// and ages out.
//
// The cache is bounded (Options.MaxBytes): after each Put the oldest
// entries (by modification time, which Get refreshes on a hit) are
// removed until the directory is under the bound.
//
// It does not know what it stores: the payload's encoding belongs to the
// package whose values it is (lineinfo's MarshalBinary, say). It is pure
// Go over the file system and builds on any OS.
//
// Files:
//
//	cache.go  Cache, Open, Get, Put, the entry's header and checksum
//	evict.go  the size bound: the oldest entries removed after a Put
//	key.go    Key, FileID and SelfID: what an entry's name is made of
package anacache
