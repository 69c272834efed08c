package lineinfo

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/line"
)

// Line-number program opcodes. [DWARF5 6.2.5.2, 6.2.5.3, 7.22]
const (
	lnsCopy             = 1
	lnsAdvancePC        = 2
	lnsAdvanceLine      = 3
	lnsSetFile          = 4
	lnsSetColumn        = 5
	lnsNegateStmt       = 6
	lnsSetBasicBlock    = 7
	lnsConstAddPC       = 8
	lnsFixedAdvancePC   = 9
	lnsPrologueEnd      = 10
	lnsEpilogueBegin    = 11
	lnsSetISA           = 12
	lneEndSequence      = 1
	lneSetAddress       = 2
	lneDefineFile       = 3
	lneSetDiscriminator = 4
)

// noFile marks a row whose file index is not in the unit's file table.
const noFile = ^uint32(0)

// An entry is one row of the full line table (statement or not) or one
// end_sequence, kept for Lookup.
type entry struct {
	addr uint64
	file uint32
	line uint32
	ord  uint32 // emission order, so that sorting is deterministic
	end  bool   // an end_sequence: addr is one past the sequence
}

// A builder accumulates the rows of every unit of a .debug_line section.
type builder struct {
	files   []string
	fileIdx map[string]uint32
	md5     map[string][16]byte // DW_LNCT_MD5 by file, the first unit's
	rows    []Row
	all     []entry
	compDir func(off uint64) string // DW_AT_comp_dir of the unit at a .debug_line offset
}

// addFile returns the Table.Files index of p, adding it if needed.
func (b *builder) addFile(p string) uint32 {
	if i, ok := b.fileIdx[p]; ok {
		return i
	}
	i := uint32(len(b.files))
	b.files = append(b.files, p)
	b.fileIdx[p] = i
	return i
}

// addMD5 records sum, a DW_LNCT_MD5 digest, for the file p, unless a unit
// read before recorded one.
func (b *builder) addMD5(p string, sum []byte) {
	if _, ok := b.md5[p]; ok || len(sum) != 16 {
		return
	}
	if b.md5 == nil {
		b.md5 = make(map[string][16]byte)
	}
	b.md5[p] = [16]byte(sum)
}

// parseLineSection reads every unit of a .debug_line section. debugLineStr
// is .debug_line_str (may be nil); compDir, when not nil, returns the
// compilation directory of the unit at a section offset, used to make
// DWARF 2-4 paths absolute. With deferGoStd, the units of a Go program's
// GOROOT are left for Lookup to run when it needs them (gostd.go).
func parseLineSection(debugLine, debugLineStr []byte, compDir func(uint64) string, deferGoStd bool) (*Table, error) {
	spans, err := splitUnits(debugLine)
	if err != nil {
		return nil, err
	}
	b := &builder{fileIdx: make(map[string]uint32), compDir: compDir}
	if !deferGoStd {
		b.size(len(debugLine))
		for _, u := range spans {
			if err := b.unit(u.data, debugLineStr, u.off); err != nil {
				return nil, err
			}
		}
		return b.table(), nil
	}
	// Every header first: which units are the Go root's is known once the
	// runtime's proc.go is seen, wherever its unit is.
	states := make([]*state, len(spans))
	root := ""
	for k, u := range spans {
		s, err := b.prepare(u.data, debugLineStr, u.off)
		if err != nil {
			return nil, err
		}
		states[k] = s
		if root == "" {
			root = goRootOf(s.files.names)
		}
	}
	var later []span
	now := make([]bool, len(spans))
	size := 0
	for k, u := range spans {
		if root != "" && stdUnit(states[k].files.names, root) {
			later = append(later, u)
			continue
		}
		now[k] = true
		size += len(u.data)
	}
	b.size(size)
	for k, u := range spans {
		if !now[k] {
			continue
		}
		if err := states[k].runUnit(u.data); err != nil {
			return nil, err
		}
	}
	t := b.table()
	t.goRoot = root
	if len(later) > 0 {
		t.deferred = &deferred{units: later, debugLineStr: debugLineStr}
	}
	return t, nil
}

// size sizes b's tables for line programs of n bytes. GCC's take 3.8 to
// 4.4 bytes a row: sized once, the tables of a large program are not
// copied over as they grow (a million rows are 24 MB).
func (b *builder) size(n int) {
	b.all = make([]entry, 0, n/3)
	b.rows = make([]Row, 0, n/3)
}

// splitUnits cuts a .debug_line section into its units, checking each
// unit_length against the section.
func splitUnits(debugLine []byte) ([]span, error) {
	var spans []span
	for off := uint64(0); off < uint64(len(debugLine)); {
		rest := debugLine[off:]
		if len(rest) < 4 {
			return nil, &DecodeError{Section: ".debug_line", Offset: off, Msg: "truncated unit_length"}
		}
		// [DWARF5 7.4]: 0xffffffff introduces the 64-bit format, which
		// delve's parser does not support; 0xfffffff0-0xfffffffe are reserved.
		ulen := uint64(binary.LittleEndian.Uint32(rest))
		if ulen >= 0xfffffff0 {
			return nil, &DecodeError{Section: ".debug_line", Offset: off, Msg: "64-bit DWARF line tables are not supported"}
		}
		if ulen > uint64(len(rest))-4 {
			return nil, &DecodeError{Section: ".debug_line", Offset: off, Msg: fmt.Sprintf("unit_length %d beyond the section", ulen)}
		}
		spans = append(spans, span{off: off, data: rest[:4+ulen]})
		off += 4 + ulen
	}
	return spans, nil
}

// parseHeader runs delve's header parser over one unit, turning its panics
// and log messages into a *DecodeError.
func parseHeader(unit, debugLineStr []byte, compDir string, off uint64) (dbl *line.DebugLineInfo, err error) {
	var msg string
	logf := func(format string, args ...any) {
		if msg == "" {
			msg = fmt.Sprintf(format, args...)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			dbl, err = nil, &DecodeError{Section: ".debug_line", Offset: off, Msg: fmt.Sprintf("line table header: %v", p)}
		}
	}()
	dbl = line.Parse(compDir, bytes.NewBuffer(unit), debugLineStr, logf, 0, false, 8)
	if msg != "" || dbl == nil || dbl.Prologue == nil {
		if msg == "" {
			msg = "cannot parse the file table"
		}
		return nil, &DecodeError{Section: ".debug_line", Offset: off, Msg: "line table header: " + msg}
	}
	return dbl, nil
}

// unit parses one line table unit (unit_length included) at section
// offset off and runs its line-number program.
func (b *builder) unit(unit, debugLineStr []byte, off uint64) error {
	s, err := b.prepare(unit, debugLineStr, off)
	if err != nil {
		return err
	}
	return s.runUnit(unit)
}

// prepare reads the header of the unit at section offset off: its state
// machine, ready to run.
func (b *builder) prepare(unit, debugLineStr []byte, off uint64) (*state, error) {
	h, derr := checkHeader(unit, debugLineStr, off)
	if derr != nil {
		return nil, derr
	}
	compDir := ""
	if b.compDir != nil && h.version < 5 {
		compDir = b.compDir(off)
	}
	dbl, err := parseHeader(unit, debugLineStr, compDir, off)
	if err != nil {
		return nil, err
	}
	return &state{b: b, p: dbl.Prologue, files: b.unitFiles(h, dbl, off), off: off, start: h.programStart}, nil
}

// runUnit runs the line-number program of unit, the unit s was prepared
// from.
func (s *state) runUnit(unit []byte) error {
	s.reset()
	r := &reader{data: unit, off: s.start, base: s.off}
	s.run(r)
	if r.err != nil {
		return r.err
	}
	// A unit whose last sequence lacks its end_sequence is malformed, but
	// its rows are still right; keep them.
	return nil
}

// run executes the line-number program from r's position to the end of
// the unit, or to r's first error.
func (s *state) run(r *reader) {
	p := s.p
	minInst := uint64(p.MinInstrLength)
	lineRange := p.LineRange
	opBase := p.OpcodeBase
	for r.err == nil && r.left() > 0 {
		op := r.u8()
		if op >= opBase {
			// Special opcode. [DWARF5 6.2.5.1]
			adj := op - opBase
			s.addr += uint64(adj/lineRange) * minInst
			s.lineNo += int64(p.LineBase) + int64(adj%lineRange)
			s.emit()
			continue
		}
		switch op {
		case 0:
			s.extended(r)
		case lnsCopy:
			s.emit()
		case lnsAdvancePC:
			s.addr += r.uleb() * minInst
		case lnsAdvanceLine:
			s.lineNo += r.sleb()
		case lnsSetFile:
			s.fileNo = r.uleb()
		case lnsSetColumn, lnsSetISA:
			r.uleb()
		case lnsNegateStmt:
			s.isStmt = !s.isStmt
		case lnsSetBasicBlock, lnsPrologueEnd, lnsEpilogueBegin:
		case lnsConstAddPC:
			s.addr += uint64((255-opBase)/lineRange) * minInst
		case lnsFixedAdvancePC:
			s.addr += uint64(r.u16())
		default:
			// A standard opcode this reader does not know: skip the
			// operands the header declares for it. [DWARF5 6.2.5.2]
			for range p.StdOpLengths[op-1] {
				r.uleb()
			}
		}
	}
}

// extended executes one extended opcode (the 0 that introduces it already
// read): length, sub-opcode, operands. [DWARF5 6.2.5.3] The length is
// checked against the unit before the operands are read, so a bad one
// cannot make the program read past its unit.
func (s *state) extended(r *reader) {
	n := r.uleb()
	if r.err != nil {
		return
	}
	if n == 0 || n > uint64(r.left()) {
		r.fail(fmt.Sprintf("extended opcode length %d", n))
		return
	}
	body := r.bytes(int(n))
	er := &reader{data: body[1:], base: s.off + uint64(r.off-len(body)+1)}
	switch body[0] {
	case lneEndSequence:
		s.endSequence()
	case lneSetAddress:
		switch len(er.data) {
		case 8:
			s.addr = binary.LittleEndian.Uint64(er.data)
		case 4:
			s.addr = uint64(binary.LittleEndian.Uint32(er.data))
		default:
			r.fail(fmt.Sprintf("DW_LNE_set_address with %d-byte operand", len(er.data)))
		}
	case lneDefineFile:
		// DWARF 2-4 only: a file entry in the program. [DWARF4 6.2.5.3]
		name := er.cstring()
		dir := er.uleb()
		if er.err != nil {
			r.fail("bad DW_LNE_define_file")
			return
		}
		s.files.define(name, dir)
	case lneSetDiscriminator:
		// Only distinguishes blocks on one line: nothing to count.
	}
}

// absolute cleans p and joins it with the unit's compilation directory
// when it is relative (possible for DWARF 2-4, whose directory 0 is
// implicit, and for producers that record a relative directory).
//
// dir0 is a DWARF 5 unit's directory 0, which is its compilation directory
// [DWARF5 6.2.4 item 19]: used instead of DW_AT_comp_dir, which would
// inflate and walk .debug_info (a Go program's "<autogenerated>" is
// relative in every unit). It is "" for DWARF 2-4.
func (b *builder) absolute(p string, off uint64, dir0 string) string {
	if !path.IsAbs(p) {
		dir := dir0
		if dir == "" && b.compDir != nil {
			dir = b.compDir(off)
		}
		if dir != "" {
			p = path.Join(dir, p)
		}
	}
	if p == "" {
		return p
	}
	return path.Clean(strings.ReplaceAll(p, "\\", "/"))
}

// isDiscarded reports a sequence start address that linkers write for
// discarded sections: 0 (GNU ld), or -1 and -2 (lld's tombstones). No
// Linux executable has code at page 0 (vm.mmap_min_addr).
func isDiscarded(start uint64) bool {
	return start == 0 || start >= ^uint64(1)
}
