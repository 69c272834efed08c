//go:build linux

package monitor

import (
	"slices"

	"golang.org/x/sys/unix"
)

// A stage holds a procMem's writes in pages of its own while many small
// reads and writes are made together (an eager attach patches tens of
// thousands of sites, three writes each: monitor/eager_linux_amd64.go),
// and then writes each run of changed pages with one pwrite. Nothing the
// process can run may read the memory meanwhile: its threads are stopped,
// and an injected system call first flushes the stage (syscallIn).
//
// A range the caller will touch throughout (a module's code, its
// trampolines' region), read with one pread by prefetch, is held in one
// buffer, a block, so that it costs one system call to read and one per
// run of changed pages to write, without a copy.
type stage struct {
	blocks []stageBlock      // ranges held whole, disjoint
	pages  map[uint64][]byte // page address → its bytes, read on first use, outside the blocks
	dirty  map[uint64]bool
}

// A stageBlock holds the pages from lo on in one buffer.
type stageBlock struct {
	lo  uint64
	buf []byte
}

// stagePage is the stage's unit: the x86-64 page.
const stagePage = 4096

// beginStage makes m hold its writes until endStage.
func (m *procMem) beginStage() {
	if m.st == nil {
		m.st = &stage{pages: map[uint64][]byte{}, dirty: map[uint64]bool{}}
	}
}

// staging reports whether m holds its writes (beginStage).
func (m *procMem) staging() bool { return m.st != nil }

// endStage writes what the stage holds and makes m write through again.
// It returns the first error.
func (m *procMem) endStage() error {
	err := m.flush()
	m.st = nil
	return err
}

// prefetch reads the pages of [lo, hi) into the stage with one pread,
// when the stage is on and they can all be read; otherwise they are read
// a page at a time as they are used.
func (m *procMem) prefetch(lo, hi uint64) {
	if m.st == nil || lo >= hi {
		return
	}
	lo, hi = lo&^(stagePage-1), (hi+stagePage-1)&^(stagePage-1)
	buf := blockBuffer(hi - lo)
	if n, err := unix.Pread(m.fd, buf, int64(lo)); err != nil || n != len(buf) {
		releaseBlock(buf)
		return
	}
	m.st.hold(lo, buf)
}

// zero puts the pages of [lo, hi) in the stage as zero, without reading
// them: the caller knows nothing was written there since the region was
// mapped anonymous.
func (m *procMem) zero(lo, hi uint64) {
	if m.st == nil || lo >= hi {
		return
	}
	lo, hi = lo&^(stagePage-1), (hi+stagePage-1)&^(stagePage-1)
	m.st.hold(lo, blockBuffer(hi-lo))
}

// hold makes buf, the bytes of the pages from lo on, a block of the
// stage, unless it overlaps one; the pages already staged there are
// copied into it, so that nothing written is lost.
func (st *stage) hold(lo uint64, buf []byte) {
	hi := lo + uint64(len(buf))
	for _, b := range st.blocks {
		if lo < b.lo+uint64(len(b.buf)) && b.lo < hi {
			releaseBlock(buf)
			return
		}
	}
	for a, p := range st.pages {
		if a >= lo && a < hi {
			copy(buf[a-lo:], p)
			delete(st.pages, a)
		}
	}
	st.blocks = append(st.blocks, stageBlock{lo: lo, buf: buf})
}

// flush writes the stage's changed pages, each run of adjacent ones with
// one pwrite, and empties it.
func (m *procMem) flush() error {
	st := m.st
	if st == nil || len(st.dirty) == 0 {
		if st != nil {
			clear(st.pages)
			st.dropBlocks()
		}
		return nil
	}
	addrs := make([]uint64, 0, len(st.dirty))
	for a := range st.dirty {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	var first error
	for k := 0; k < len(addrs); {
		b := st.blockOf(addrs[k])
		j := k + 1
		for j < len(addrs) && addrs[j] == addrs[j-1]+stagePage && st.blockOf(addrs[j]) == b {
			j++
		}
		var buf []byte
		if b != nil {
			// The run's pages are adjacent in the block's buffer.
			off := addrs[k] - b.lo
			buf = b.buf[off : off+uint64(j-k)*stagePage]
		} else {
			buf = make([]byte, 0, (j-k)*stagePage)
			for _, a := range addrs[k:j] {
				buf = append(buf, st.pages[a]...)
			}
		}
		if _, err := unix.Pwrite(m.fd, buf, int64(addrs[k])); err != nil && first == nil {
			first = err
		}
		k = j
	}
	clear(st.pages)
	clear(st.dirty)
	st.dropBlocks()
	return first
}

// blockBuffer returns n bytes of zero for a block, its pages made at once
// (MAP_POPULATE): a block is written whole, and taking its pages one
// fault at a time cost more than the writes themselves.
func blockBuffer(n uint64) []byte {
	b, err := unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		return make([]byte, n)
	}
	return b
}

// releaseBlock returns a block's buffer made by blockBuffer.
func releaseBlock(b []byte) {
	if unix.Munmap(b) != nil {
		// Made by make (the mapping failed): the collector's.
		return
	}
}

// dropBlocks releases the stage's blocks.
func (st *stage) dropBlocks() {
	for _, b := range st.blocks {
		releaseBlock(b.buf)
	}
	st.blocks = nil
}

// blockOf returns the block holding the page at a, or nil.
func (st *stage) blockOf(a uint64) *stageBlock {
	for k := range st.blocks {
		b := &st.blocks[k]
		if a >= b.lo && a < b.lo+uint64(len(b.buf)) {
			return b
		}
	}
	return nil
}

// page returns the stage's copy of the page at a, read on first use; nil
// when it cannot be read whole.
func (st *stage) page(fd int, a uint64) []byte {
	if b := st.blockOf(a); b != nil {
		off := a - b.lo
		return b.buf[off : off+stagePage : off+stagePage]
	}
	if p, ok := st.pages[a]; ok {
		return p
	}
	p := make([]byte, stagePage)
	if n, err := unix.Pread(fd, p, int64(a)); err != nil || n != stagePage {
		return nil
	}
	st.pages[a] = p
	return p
}

// stagedRead reads through the stage; false when a page cannot be read
// whole (the caller then reads the memory itself).
func (m *procMem) stagedRead(addr uint64, buf []byte) (int, bool) {
	n := 0
	for n < len(buf) {
		a := addr + uint64(n)
		p := m.st.page(m.fd, a&^(stagePage-1))
		if p == nil {
			return 0, false
		}
		n += copy(buf[n:], p[a&(stagePage-1):])
	}
	return n, true
}

// stagedWrite writes into the stage; false when a page cannot be read
// whole (the caller then writes the memory itself).
func (m *procMem) stagedWrite(addr uint64, buf []byte) (int, bool) {
	n := 0
	for n < len(buf) {
		a := addr + uint64(n)
		pa := a &^ (stagePage - 1)
		p := m.st.page(m.fd, pa)
		if p == nil {
			return 0, false
		}
		n += copy(p[a&(stagePage-1):], buf[n:])
		m.st.dirty[pa] = true
	}
	return n, true
}
