//go:build linux

package sampler

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// unsafeSizeofAttr is the size of the perf_event_attr patchprof passes
// (PERF_ATTR_SIZE_VER8 and later: the kernel accepts any known size).
const unsafeSizeofAttr = unsafe.Sizeof(unix.PerfEventAttr{})

// A ring is the mmapped ring buffer of one event: a metadata page (struct
// perf_event_mmap_page) followed by 2^n data pages.
type ring struct {
	fd   int
	mem  []byte
	meta *unix.PerfEventMmapPage
	data []byte
	tmp  []byte // a record that wraps around the end, copied out
	head uint64 // data_head at the last read: what release frees
}

// mapRing maps the ring buffer of event fd with pages data pages.
func mapRing(fd, pages int) (*ring, error) {
	ps := unix.Getpagesize()
	mem, err := unix.Mmap(fd, 0, (pages+1)*ps, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap: %w", err)
	}
	r := &ring{fd: fd, mem: mem, meta: (*unix.PerfEventMmapPage)(unsafe.Pointer(&mem[0])), data: mem[ps:]}
	return r, nil
}

// read appends the samples written since the last read to out (regs: as
// parse's). The kernel publishes data_head after writing the records (a
// load-acquire here pairs with its store-release), and reuses the space
// up to data_tail only after it reads our store (perf_event_open(2),
// "mmap layout"): the samples' stacks alias that space, so the caller
// calls release once it is done with them.
func (r *ring) read(out []Sample, regs bool, lost *uint64) ([]Sample, error) {
	head := atomic.LoadUint64(&r.meta.Data_head)
	tail := r.meta.Data_tail
	if head == tail {
		return out, nil
	}
	n := uint64(len(r.data))
	size := head - tail
	r.head = head
	if size > n {
		// Cannot happen unless the kernel overwrote unread data.
		return out, fmt.Errorf("%w: %d bytes pending in a ring of %d", ErrBadRecord, size, n)
	}
	start := tail % n
	var b []byte
	if start+size <= n {
		b = r.data[start : start+size]
	} else {
		r.tmp = append(r.tmp[:0], r.data[start:]...)
		r.tmp = append(r.tmp, r.data[:size-(n-start)]...)
		b = r.tmp
	}
	return parse(b, regs, out, lost)
}

// release gives the space read by the last read back to the kernel.
func (r *ring) release() {
	if r.head != r.meta.Data_tail {
		atomic.StoreUint64(&r.meta.Data_tail, r.head)
	}
}

// unmap releases the ring's memory.
func (r *ring) unmap() error {
	err := unix.Munmap(r.mem)
	r.mem, r.meta, r.data = nil, nil, nil
	return err
}
