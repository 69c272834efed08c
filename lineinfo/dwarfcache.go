package lineinfo

import (
	"debug/dwarf"
	"os"
	"sync"
	"time"
)

// Read and then Subprograms open the same file one after the other, and
// each needs its parsed DWARF: debug/elf decompresses every section again
// for each (a Go binary's are zlib-compressed, tens of megabytes once
// inflated). Read leaves what it parsed here; the Subprograms call
// on the same unchanged file takes it, and the cache is empty again.

// A fileID tells a file apart from the same path rewritten.
type fileID struct {
	path  string
	size  int64
	mtime time.Time
}

func idOf(path string) (fileID, bool) {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return fileID{}, false
	}
	return fileID{path: path, size: st.Size(), mtime: st.ModTime()}, true
}

var handoff struct {
	sync.Mutex
	id fileID
	d  *dwarf.Data
}

// leave keeps d, the DWARF of path, for the next take of the same file.
func leave(path string, d *dwarf.Data) {
	id, ok := idOf(path)
	if !ok || d == nil {
		return
	}
	handoff.Lock()
	defer handoff.Unlock()
	handoff.id, handoff.d = id, d
}

// take returns the DWARF left for path if the file is unchanged, and
// empties the cache either way.
func take(path string) *dwarf.Data {
	id, ok := idOf(path)
	handoff.Lock()
	defer handoff.Unlock()
	d := handoff.d
	match := ok && handoff.id == id
	handoff.id, handoff.d = fileID{}, nil
	if !match {
		return nil
	}
	return d
}
