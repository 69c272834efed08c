//go:build linux && amd64

package monitor

import (
	"sync/atomic"
	"unsafe"
)

// The counter words are shared with the target, which adds to them while
// patchprof reads: each is read and written whole, with an atomic access
// to the 8-byte-aligned word of patchprof's own mapping of the memfd.

// loadCounter returns the word at byte offset off of mem.
func loadCounter(mem []byte, off uint64) uint64 {
	return atomic.LoadUint64((*uint64)(unsafe.Pointer(&mem[off])))
}

// addCounter adds d (two's complement) to the word at byte offset off.
func addCounter(mem []byte, off uint64, d uint64) {
	atomic.AddUint64((*uint64)(unsafe.Pointer(&mem[off])), d)
}

// storeCounter sets the word at byte offset off of mem to v.
func storeCounter(mem []byte, off, v uint64) {
	atomic.StoreUint64((*uint64)(unsafe.Pointer(&mem[off])), v)
}
