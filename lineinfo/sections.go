package lineinfo

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"strings"
)

// A program's line table and its units' comp dirs come from .debug_line
// and .debug_info, which debug/elf's File.DWARF inflates again (with every
// other debug section, location lists and call frames included) though
// Read has just inflated them, and a Go binary's sections are
// compressed. debugSections reads each section once and builds the DWARF from those
// it needs.

// debugSections is one ELF file's DWARF sections, each read on first use.
type debugSections struct {
	f    *elf.File
	data map[string][]byte
}

func newDebugSections(f *elf.File) *debugSections {
	return &debugSections{f: f, data: map[string][]byte{}}
}

// get returns section .debug_NAME, inflated; nil when the file has none.
func (ds *debugSections) get(name string) ([]byte, error) {
	if b, ok := ds.data[name]; ok {
		return b, nil
	}
	b, err := sectionData(ds.f, name)
	if err != nil {
		return nil, err
	}
	ds.data[name] = b
	return b, nil
}

// dwarfNames are the sections debug/dwarf reads besides the first five
// (DWARF 5's); location lists and call frames are not read.
var dwarfNames = []string{"addr", "line_str", "str_offsets", "rnglists"}

// dwarf returns the file's parsed DWARF, from the sections read once. A
// relocatable object (whose sections need relocating) or a file with old
// GNU .zdebug sections goes through debug/elf, which handles both.
func (ds *debugSections) dwarf() (*dwarf.Data, error) {
	if ds.f.Type == elf.ET_REL {
		return ds.f.DWARF()
	}
	for _, s := range ds.f.Sections {
		if strings.HasPrefix(s.Name, ".zdebug_") {
			return ds.f.DWARF()
		}
	}
	var b [5][]byte
	for k, name := range []string{"abbrev", "info", "line", "ranges", "str"} {
		var err error
		if b[k], err = ds.get(name); err != nil {
			return nil, err
		}
	}
	d, err := dwarf.New(b[0], nil, nil, b[1], b[2], nil, b[3], b[4])
	if err != nil {
		return nil, err
	}
	for _, name := range dwarfNames {
		data, err := ds.get(name)
		if err != nil {
			return nil, err
		}
		if data != nil {
			if err := d.AddSection(".debug_"+name, data); err != nil {
				return nil, err
			}
		}
	}
	for i, s := range ds.f.Sections {
		if s.Name == ".debug_types" && s.Type != elf.SHT_NOBITS {
			data, err := s.Data()
			if err != nil {
				return nil, err
			}
			if err := d.AddTypes(fmt.Sprintf("types-%d", i), data); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}
