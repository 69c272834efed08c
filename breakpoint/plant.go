package breakpoint

import (
	"fmt"

	"github.com/patchprof/patchprof/breakpoint/relocate"
)

// A PlantError says which page could not be read or written.
type PlantError struct {
	Op   string // "read" or "write"
	Addr uint64 // runtime address of the span
	Err  error
}

func (e *PlantError) Error() string {
	return fmt.Sprintf("%s target memory at %#x: %v", e.Op, e.Addr, e.Err)
}

func (e *PlantError) Unwrap() error { return e.Err }

// pageSpans calls f for each run of sites that share a page: sites
// [first, last] span runtime bytes [lo, hi).
func (t *Table) pageSpans(f func(first, last int, lo, hi uint64) error) error {
	for i := 0; i < len(t.addr); {
		page := (t.addr[i] + t.bias) / PageSize
		j := i
		for j+1 < len(t.addr) && (t.addr[j+1]+t.bias)/PageSize == page {
			j++
		}
		if err := f(i, j, t.addr[i]+t.bias, t.addr[j]+t.bias+1); err != nil {
			return err
		}
		i = j + 1
	}
	return nil
}

// Plant saves the original byte of every site and writes an int3 over it, with
// one read and one write per touched page. Sites already armed are left alone.
func (t *Table) Plant(mem Memory) error {
	buf := make([]byte, PageSize)
	return t.pageSpans(func(first, last int, lo, hi uint64) error {
		span := buf[:hi-lo]
		if err := readFull(mem, lo, span); err != nil {
			return err
		}
		for i := first; i <= last; i++ {
			if t.Derived(i) {
				continue
			}
			off := t.addr[i] + t.bias - lo
			if t.flags[i]&flagArmed == 0 {
				t.orig[i] = span[off]
			}
			span[off] = relocate.Int3
		}
		if err := writeFull(mem, lo, span); err != nil {
			return err
		}
		for i := first; i <= last; i++ {
			if !t.Derived(i) {
				t.flags[i] |= flagArmed
			}
		}
		return nil
	})
}

// Restore puts the original byte back at every armed site, one read and one
// write per touched page, so the process is left as it was before Plant.
func (t *Table) Restore(mem Memory) error {
	buf := make([]byte, PageSize)
	return t.pageSpans(func(first, last int, lo, hi uint64) error {
		any := false
		for i := first; i <= last; i++ {
			any = any || t.flags[i]&flagArmed != 0
		}
		if !any {
			return nil
		}
		span := buf[:hi-lo]
		if err := readFull(mem, lo, span); err != nil {
			return err
		}
		for i := first; i <= last; i++ {
			if t.flags[i]&flagArmed != 0 {
				span[t.addr[i]+t.bias-lo] = t.orig[i]
			}
		}
		if err := writeFull(mem, lo, span); err != nil {
			return err
		}
		for i := first; i <= last; i++ {
			t.flags[i] &^= flagArmed
		}
		return nil
	})
}

// RestoreIn puts the original byte back at every planted site in one address
// space, page by page, without changing the table's planted state; Unplant
// does that once every space is restored.
func (t *Table) RestoreIn(mem Memory) error {
	buf := make([]byte, PageSize)
	return t.pageSpans(func(first, last int, lo, hi uint64) error {
		span := buf[:hi-lo]
		if err := readFull(mem, lo, span); err != nil {
			return err
		}
		changed := false
		for i := first; i <= last; i++ {
			if t.flags[i]&flagArmed != 0 && span[t.addr[i]+t.bias-lo] == relocate.Int3 {
				span[t.addr[i]+t.bias-lo] = t.orig[i]
				changed = true
			}
		}
		if !changed {
			return nil
		}
		return writeFull(mem, lo, span)
	})
}

// Unplant marks every site as no longer planted.
func (t *Table) Unplant() {
	for i := range t.flags {
		t.flags[i] &^= flagArmed
	}
}

// DisarmIn puts site i's original byte back in one address space, so a thread
// there can execute the real instruction. Which sites are disarmed is tracked by
// the caller per address space: a forked child has its own copy of the code.
func (t *Table) DisarmIn(mem Memory, i int) error {
	return writeFull(mem, t.addr[i]+t.bias, t.orig[i:i+1])
}

var int3Byte = []byte{relocate.Int3}

// ArmIn writes site i's int3 back in one address space.
func (t *Table) ArmIn(mem Memory, i int) error {
	return writeFull(mem, t.addr[i]+t.bias, int3Byte)
}

func readFull(mem Memory, addr uint64, buf []byte) error {
	n, err := mem.ReadMemory(addr, buf)
	if err == nil && n != len(buf) {
		err = fmt.Errorf("short read: %d of %d bytes", n, len(buf))
	}
	if err != nil {
		return &PlantError{Op: "read", Addr: addr, Err: err}
	}
	return nil
}

func writeFull(mem Memory, addr uint64, buf []byte) error {
	n, err := mem.WriteMemory(addr, buf)
	if err == nil && n != len(buf) {
		err = fmt.Errorf("short write: %d of %d bytes", n, len(buf))
	}
	if err != nil {
		return &PlantError{Op: "write", Addr: addr, Err: err}
	}
	return nil
}
