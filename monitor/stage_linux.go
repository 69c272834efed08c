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
type stage struct {
	pages map[uint64][]byte // page address → its bytes, read on first use
	dirty map[uint64]bool
}

// stagePage is the stage's unit: the x86-64 page.
const stagePage = 4096

// beginStage makes m hold its writes until endStage.
func (m *procMem) beginStage() {
	if m.st == nil {
		m.st = &stage{pages: map[uint64][]byte{}, dirty: map[uint64]bool{}}
	}
}

// endStage writes what the stage holds and makes m write through again.
// It returns the first error.
func (m *procMem) endStage() error {
	err := m.flush()
	m.st = nil
	return err
}

// flush writes the stage's changed pages, each run of adjacent ones with
// one pwrite, and empties it.
func (m *procMem) flush() error {
	st := m.st
	if st == nil || len(st.dirty) == 0 {
		if st != nil {
			clear(st.pages)
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
		j := k + 1
		for j < len(addrs) && addrs[j] == addrs[j-1]+stagePage {
			j++
		}
		buf := make([]byte, 0, (j-k)*stagePage)
		for _, a := range addrs[k:j] {
			buf = append(buf, st.pages[a]...)
		}
		if _, err := unix.Pwrite(m.fd, buf, int64(addrs[k])); err != nil && first == nil {
			first = err
		}
		k = j
	}
	clear(st.pages)
	clear(st.dirty)
	return first
}

// page returns the stage's copy of the page at a, read on first use; nil
// when it cannot be read whole.
func (st *stage) page(fd int, a uint64) []byte {
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
