package lineinfo

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
)

// Read reads the line table of the ELF executable at path.
//
// Errors: ErrNoLineInfo (wrapped, with advice) when there is no
// .debug_line or it has no rows; a *DecodeError when a DWARF section is
// corrupt; the os or debug/elf error (wrapped) when path cannot be opened
// as ELF. Read never panics on a bad file.
func Read(path string) (t *Table, err error) { return ReadWith(path, ReadOptions{}) }

// ReadWith is Read with options: see ReadOptions.
func ReadWith(path string, opt ReadOptions) (t *Table, err error) {
	err = withELF(path, "ELF section headers", func(f *elf.File) error {
		noLines := fmt.Errorf("no DWARF line information in %s: rebuild with -g, or use --funcs: %w", path, ErrNoLineInfo)
		ds := newDebugSections(f)
		debugLine, err := ds.get("line")
		if err != nil {
			return err
		}
		if debugLine == nil {
			return noLines
		}
		debugLineStr, err := ds.get("line_str")
		if err != nil {
			return err
		}
		t, err = parseLineSection(debugLine, debugLineStr, compDirs(ds, path), opt.DeferGoStd)
		if err != nil {
			return err
		}
		if len(t.Rows) == 0 {
			return noLines
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// withELF opens the ELF file at path, runs read on it and closes it. A
// panic of debug/elf (it reads section headers and sections lazily and
// can panic on corrupt ones) becomes a *DecodeError naming section.
func withELF(path, section string, read func(*elf.File) error) (err error) {
	f, err := openELF(path)
	if err != nil {
		return fmt.Errorf("lineinfo: %w", err)
	}
	defer func() { err = errors.Join(err, closeErr(f)) }()
	defer func() {
		if p := recover(); p != nil {
			err = &DecodeError{Section: section, Msg: fmt.Sprint(p)}
		}
	}()
	return read(f)
}

func closeErr(f *elf.File) error {
	if err := f.Close(); err != nil {
		return fmt.Errorf("lineinfo: %w", err)
	}
	return nil
}

// openELF opens path with debug/elf, which can panic on a corrupt file.
func openELF(path string) (f *elf.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			// Not naming path: callers name the file, and the error of a
			// failed elf.Open (*os.PathError) already does.
			f, err = nil, fmt.Errorf("corrupt ELF file: %v", p)
		}
	}()
	return elf.Open(path)
}

// sectionData returns the decompressed contents of .debug_<name>, or of the
// older GNU .zdebug_<name>, or nil when there is neither. Section.Data
// decompresses both SHF_COMPRESSED and "ZLIB"-headed .zdebug_ sections.
func sectionData(f *elf.File, name string) ([]byte, error) {
	s := f.Section(".debug_" + name)
	if s == nil {
		s = f.Section(".zdebug_" + name)
	}
	// SHT_NOBITS: a stripped file that only keeps the section header.
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	data, err := s.Data()
	if err != nil {
		return nil, &DecodeError{Section: s.Name, Msg: fmt.Sprintf("cannot read section: %v", err)}
	}
	return data, nil
}

// compDirs returns a function giving DW_AT_comp_dir of the compile unit
// whose DW_AT_stmt_list is a given .debug_line offset. The map is built on
// first use: only DWARF 2-4 line tables with relative paths need it. A
// corrupt or missing .debug_info yields "" (paths stay relative) rather
// than an error, since the line table itself may be fine.
func compDirs(ds *debugSections, path string) func(uint64) string {
	var dirs map[uint64]string
	return func(off uint64) string {
		if dirs == nil {
			dirs = readCompDirs(ds, path)
		}
		return dirs[off]
	}
}

// readCompDirs reads the comp dirs of f's units; the DWARF it parses for
// them is left for Subprograms on path (dwarfcache.go).
func readCompDirs(ds *debugSections, path string) (dirs map[uint64]string) {
	dirs = make(map[uint64]string)
	defer func() {
		if recover() != nil {
			// Keep what was read before debug/dwarf gave up.
			return
		}
	}()
	info, err := ds.get("info")
	if err != nil || info == nil {
		return dirs
	}
	d, err := ds.dwarf()
	if err != nil {
		return dirs
	}
	leave(path, d)
	// Visit only the unit entries, seeking from unit header to unit header
	// [DWARF5 7.5.1], instead of walking every DIE of .debug_info.
	r := d.Reader()
	for off := uint64(0); off+4 <= uint64(len(info)); {
		ulen := uint64(binary.LittleEndian.Uint32(info[off:]))
		hdr := uint64(4)
		if ulen == 0xffffffff {
			if off+12 > uint64(len(info)) {
				break
			}
			ulen, hdr = binary.LittleEndian.Uint64(info[off+4:]), 12
		}
		if ulen > uint64(len(info))-off-hdr {
			break
		}
		die, ok := firstDIE(info[off:off+hdr+ulen], hdr)
		r.Seek(dwarf.Offset(off + die))
		off += hdr + ulen
		if !ok {
			continue
		}
		e, err := r.Next()
		if err != nil || e == nil {
			continue
		}
		stmt, ok := e.Val(dwarf.AttrStmtList).(int64)
		dir, _ := e.Val(dwarf.AttrCompDir).(string)
		if ok && stmt >= 0 && dir != "" {
			dirs[uint64(stmt)] = dir
		}
	}
	return dirs
}

// firstDIE returns the offset, within the unit, of the unit's first DIE:
// the unit header's size. [DWARF5 7.5.1.1-7.5.1.3, DWARF4 7.5.1.1]
func firstDIE(unit []byte, lenSize uint64) (uint64, bool) {
	offSize := uint64(4)
	if lenSize == 12 {
		offSize = 8
	}
	if uint64(len(unit)) < lenSize+3 {
		return 0, false
	}
	version := binary.LittleEndian.Uint16(unit[lenSize:])
	if version < 5 {
		// version, debug_abbrev_offset, address_size
		return lenSize + 2 + offSize + 1, true
	}
	// version, unit_type, address_size, debug_abbrev_offset, then per type:
	size := lenSize + 2 + 1 + 1 + offSize
	switch unit[lenSize+2] {
	case 0x04, 0x05: // DW_UT_skeleton, DW_UT_split_compile: dwo_id
		size += 8
	case 0x02, 0x06: // DW_UT_type, DW_UT_split_type: signature, type_offset
		size += 8 + offSize
	}
	return size, true
}
