package breakpoint

import (
	"errors"
	"fmt"

	"github.com/patchprof/patchprof/breakpoint/relocate"
)

// errFake is what fakeMemory returns for an access that touches its failAddr.
var errFake = errors.New("fake memory fault")

// fakeMemory is an in-memory address space for tests: the bytes of
// [base, base+len(mem)) and nothing else, like a target with one mapping. It
// counts calls so tests can check how many system calls planting would cost.
type fakeMemory struct {
	base uint64
	mem  []byte

	reads, writes int            // calls made
	writtenPages  map[uint64]int // writes per page; nil to not count (benchmarks)

	// An access whose range holds failAddr fails with errFake, when failOp is
	// "read" or "write" (the empty string never fails).
	failOp   string
	failAddr uint64
	// short makes every access transfer one byte less than asked, without error.
	short bool
}

// newFakeMemory returns a fake of n bytes at base, filled with a pattern that
// never produces relocate.Int3, so a stray or missing int3 is easy to spot.
func newFakeMemory(base uint64, n int) *fakeMemory {
	m := &fakeMemory{base: base, mem: make([]byte, n), writtenPages: map[uint64]int{}}
	for i := range m.mem {
		b := byte(i*7 + i>>8)
		if b == relocate.Int3 {
			b = 0x90
		}
		m.mem[i] = b
	}
	return m
}

// span checks that [addr, addr+n) lies in the fake and returns its offset.
func (m *fakeMemory) span(op string, addr uint64, n int) (int, error) {
	if m.failOp == op && m.failAddr >= addr && m.failAddr < addr+uint64(n) {
		return 0, errFake
	}
	if addr < m.base || addr-m.base > uint64(len(m.mem)) || uint64(n) > uint64(len(m.mem))-(addr-m.base) {
		return 0, fmt.Errorf("fake %s [%#x, %#x) outside [%#x, %#x)", op, addr, addr+uint64(n), m.base, m.base+uint64(len(m.mem)))
	}
	return int(addr - m.base), nil
}

func (m *fakeMemory) ReadMemory(addr uint64, buf []byte) (int, error) {
	m.reads++
	off, err := m.span("read", addr, len(buf))
	if err != nil {
		return 0, err
	}
	n := copy(buf, m.mem[off:off+len(buf)])
	if m.short && n > 0 {
		n--
	}
	return n, nil
}

func (m *fakeMemory) WriteMemory(addr uint64, buf []byte) (int, error) {
	m.writes++
	off, err := m.span("write", addr, len(buf))
	if err != nil {
		return 0, err
	}
	if m.short && len(buf) > 0 {
		buf = buf[:len(buf)-1]
	}
	for p := addr / PageSize; m.writtenPages != nil && len(buf) > 0 && p <= (addr+uint64(len(buf))-1)/PageSize; p++ {
		m.writtenPages[p]++
	}
	return copy(m.mem[off:], buf), nil
}

// at returns the byte at addr.
func (m *fakeMemory) at(addr uint64) byte { return m.mem[addr-m.base] }

// snapshot returns a copy of the fake's bytes.
func (m *fakeMemory) snapshot() []byte { return append([]byte(nil), m.mem...) }

// resetCounts zeroes the call counters.
func (m *fakeMemory) resetCounts() {
	m.reads, m.writes = 0, 0
	m.writtenPages = map[uint64]int{}
}
