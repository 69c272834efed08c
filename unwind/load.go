package unwind

import (
	"debug/elf"
	"encoding/binary"
	"fmt"

	"github.com/go-delve/delve/pkg/dwarf/frame"
)

// Load reads the call frame information of the ELF file at path: its
// .eh_frame, at link-time addresses. It fails with ErrNoCFI when the file
// has none (a Go program's own code keeps frame pointers instead).
func Load(path string) (*Table, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the call frame information of %s: %w", path, err)
	}
	defer f.Close()
	sec := f.Section(".eh_frame")
	if sec == nil || sec.Type == elf.SHT_NOBITS || sec.Size == 0 {
		return nil, fmt.Errorf("%s: %w", path, ErrNoCFI)
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("read .eh_frame of %s: %w", path, err)
	}
	t, err := parse(data, sec.Addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			t.segs = append(t.segs, segment{off: p.Off, size: p.Filesz, addr: p.Vaddr})
		}
	}
	return t, nil
}

// A segment is an executable PT_LOAD segment: its bytes at file offset
// off and link-time address addr.
type segment struct{ off, size, addr uint64 }

// LinkAddr returns the link-time address of the byte at file offset off,
// false when no executable segment holds it: how a runtime address in a
// mapping of the file (/proc/PID/maps: its start and file offset) becomes
// one the table knows.
func (t *Table) LinkAddr(off uint64) (uint64, bool) {
	for _, s := range t.segs {
		if off >= s.off && off-s.off < s.size {
			return off - s.off + s.addr, true
		}
	}
	return 0, false
}

// parse reads an .eh_frame section whose link-time address is addr.
func parse(data []byte, addr uint64) (t *Table, err error) {
	defer func() {
		// The parser indexes what the section says without bounds
		// checks of its own: a damaged section is an error, not a crash.
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("damaged .eh_frame: %v", r)
		}
	}()
	fdes, err := frame.Parse(data, binary.LittleEndian, 0, 8, addr)
	if err != nil {
		return nil, fmt.Errorf("parse .eh_frame: %w", err)
	}
	// Append sorts by address, which FDEForPC's search needs.
	return &Table{fdes: frame.FrameDescriptionEntries(nil).Append(fdes)}, nil
}
