package lineinfo

import (
	"path"

	"github.com/go-delve/delve/pkg/dwarf/line"
)

// A state is the line-number state machine of one unit [DWARF5 6.2.2,
// table 6.4], reduced to the registers a profiler needs: no column, ISA,
// discriminator or basic-block flags, which only tell apart code on one
// line. It appends the rows it emits to its builder.
type state struct {
	b     *builder
	p     *line.DebugLinePrologue
	files *unitFiles
	off   uint64 // the unit's section offset, for errors
	start int    // offset of the line-number program in the unit

	addr    uint64
	fileNo  uint64
	lineNo  int64
	isStmt  bool
	seqFrom int // index in b.all of the sequence's first entry
	rowFrom int // index in b.rows of the sequence's first row
}

// reset sets the registers to their initial values, as at the start of the
// program and after every end_sequence, and starts a new sequence.
func (s *state) reset() {
	s.addr, s.fileNo, s.lineNo, s.isStmt = 0, 1, 1, s.p.InitialIsStmt != 0
	s.seqFrom, s.rowFrom = len(s.b.all), len(s.b.rows)
}

// emit appends a row for the registers: to the full table always (Lookup
// needs every address), to the statement rows when it is one with a line.
func (s *state) emit() {
	b := s.b
	f := s.files.index(s.fileNo)
	ln := uint32(s.lineNo)
	if s.lineNo < 0 || s.lineNo > 1<<32-1 {
		ln = 0
	}
	b.all = append(b.all, entry{addr: s.addr, file: f, line: ln, ord: uint32(len(b.all))})
	// Line 0 means "no source line" [DWARF5 6.2.5.1]: nothing to count.
	if s.isStmt && f != noFile && ln != 0 {
		b.rows = append(b.rows, Row{Addr: s.addr, File: f, Line: ln})
	}
}

// endSequence closes the current sequence at the address register and
// resets the state for the next one.
func (s *state) endSequence() {
	b := s.b
	// Rows at the end address of their own sequence cover no
	// instruction: a breakpoint there would land in whatever code
	// follows, so they are dropped from both tables.
	for len(b.all) > s.seqFrom && b.all[len(b.all)-1].addr == s.addr {
		b.all = b.all[:len(b.all)-1]
	}
	for len(b.rows) > s.rowFrom && b.rows[len(b.rows)-1].Addr == s.addr {
		b.rows = b.rows[:len(b.rows)-1]
	}
	if len(b.all) > s.seqFrom && isDiscarded(b.all[s.seqFrom].addr) {
		// The linker discarded this code (--gc-sections, COMDAT) and
		// left the sequence at a tombstone address: drop it.
		b.all, b.rows = b.all[:s.seqFrom], b.rows[:s.rowFrom]
	} else {
		b.all = append(b.all, entry{addr: s.addr, file: noFile, ord: uint32(len(b.all)), end: true})
	}
	s.reset()
}

// A unitFiles is the file table of one unit: its files' absolute paths, and
// the Table.Files index of each, assigned the first time a row uses it so
// that a file no row names never enters the table.
type unitFiles struct {
	b       *builder
	off     uint64 // the unit's section offset
	version uint16
	dirs    []string // the unit's include directories
	dir0    string   // DWARF 5: directory 0, the compilation directory
	names   []string
	md5     [][]byte // DWARF 5: the MD5 the header records for names[i], nil when none
	idx     []uint32 // Table.Files index of names[i], noFile until used
}

// unitFiles returns the file table of the unit at section offset off, with
// header h as checkHeader read it and dbl as delve's parser did.
func (b *builder) unitFiles(h *header, dbl *line.DebugLineInfo, off uint64) *unitFiles {
	f := &unitFiles{b: b, off: off, version: h.version, dirs: dbl.IncludeDirs}
	if h.version >= 5 && len(dbl.IncludeDirs) > 0 {
		f.dir0 = dbl.IncludeDirs[0]
	}
	f.names = make([]string, len(dbl.FileNames))
	for i, fe := range dbl.FileNames {
		name := fe.Path
		if h.dirIndexNotLast && i < len(h.fileDirs) && !path.IsAbs(name) && h.fileDirs[i] < uint64(len(dbl.IncludeDirs)) {
			name = path.Join(dbl.IncludeDirs[h.fileDirs[i]], name)
		}
		f.names[i] = b.absolute(name, off, f.dir0)
	}
	if len(h.fileMD5) == len(f.names) {
		f.md5 = h.fileMD5
	}
	f.idx = make([]uint32, len(f.names))
	for i := range f.idx {
		f.idx[i] = noFile
	}
	return f
}

// index maps a DW_LNS_set_file operand to a Table.Files index, or noFile.
// DWARF 2-4 number files from 1, DWARF 5 from 0. [DWARF5 6.2.4 item 20]
func (f *unitFiles) index(n uint64) uint32 {
	if f.version < 5 {
		n--
	}
	if n >= uint64(len(f.names)) {
		return noFile
	}
	if f.idx[n] == noFile {
		f.idx[n] = f.b.addFile(f.names[n])
		if n < uint64(len(f.md5)) && f.md5[n] != nil {
			f.b.addMD5(f.names[n], f.md5[n])
		}
	}
	return f.idx[n]
}

// define adds the file of a DW_LNE_define_file, name in include directory
// dir, after the header's files.
func (f *unitFiles) define(name string, dir uint64) {
	if !path.IsAbs(name) && dir < uint64(len(f.dirs)) {
		name = path.Join(f.dirs[dir], name)
	}
	f.names = append(f.names, f.b.absolute(name, f.off, f.dir0))
	f.idx = append(f.idx, noFile)
}
