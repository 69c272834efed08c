package lineinfo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// A unitBuilder assembles a small .debug_line unit, so the state machine
// can be tested on exact programs without a compiler.
type unitBuilder struct {
	version uint16
	md5     bool // DWARF 5: add DW_LNCT_MD5 after the directory index, as clang does
	prog    bytes.Buffer
}

const (
	tLineBase   = -5
	tLineRange  = 14
	tOpcodeBase = 13
)

func (u *unitBuilder) uleb(v uint64) {
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b |= 0x80
		}
		u.prog.WriteByte(b)
		if v == 0 {
			return
		}
	}
}

func (u *unitBuilder) sleb(v int64) {
	for {
		b := byte(v & 0x7f)
		v >>= 7
		done := (v == 0 && b&0x40 == 0) || (v == -1 && b&0x40 != 0)
		if !done {
			b |= 0x80
		}
		u.prog.WriteByte(b)
		if done {
			return
		}
	}
}

func (u *unitBuilder) setAddress(a uint64) *unitBuilder {
	u.prog.Write([]byte{0, 9, lneSetAddress})
	binary.Write(&u.prog, binary.LittleEndian, a)
	return u
}
func (u *unitBuilder) endSequence() *unitBuilder {
	u.prog.Write([]byte{0, 1, lneEndSequence})
	return u
}
func (u *unitBuilder) line(d int64) *unitBuilder {
	u.prog.WriteByte(lnsAdvanceLine)
	u.sleb(d)
	return u
}
func (u *unitBuilder) pc(d uint64) *unitBuilder {
	u.prog.WriteByte(lnsAdvancePC)
	u.uleb(d)
	return u
}
func (u *unitBuilder) file(n uint64) *unitBuilder {
	u.prog.WriteByte(lnsSetFile)
	u.uleb(n)
	return u
}
func (u *unitBuilder) copyRow() *unitBuilder    { u.prog.WriteByte(lnsCopy); return u }
func (u *unitBuilder) negateStmt() *unitBuilder { u.prog.WriteByte(lnsNegateStmt); return u }

// special emits a special opcode advancing the address by da and the line
// by dl. [DWARF5 6.2.5.1]
func (u *unitBuilder) special(da uint64, dl int) *unitBuilder {
	u.prog.WriteByte(byte(uint64(dl-tLineBase) + tLineRange*da + tOpcodeBase))
	return u
}

// bytes returns the whole unit: a header naming /src/a.c as file 1 and
// /src/b.c as file 2 (in DWARF 5 also /src/a.c as file 0), then the program.
func (u *unitBuilder) bytes() []byte {
	var h bytes.Buffer
	h.WriteByte(1) // minimum_instruction_length
	if u.version >= 4 {
		h.WriteByte(1) // maximum_operations_per_instruction
	}
	h.Write([]byte{1, byte(256 + tLineBase), tLineRange, tOpcodeBase}) // default_is_stmt, line_base, line_range, opcode_base
	h.Write([]byte{0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1})                // standard_opcode_lengths
	if u.version >= 5 {
		h.Write([]byte{1, 1, 0x08}) // directory format: path/string
		h.Write([]byte{1})          // one directory
		h.WriteString("/src\x00")
		if !u.md5 {
			h.Write([]byte{2, 1, 0x08, 2, 0x0b}) // file format: path/string, dir/data1
			h.Write([]byte{3})                   // files 0 and 1 both a.c, as GCC writes them
			h.WriteString("a.c\x00\x00a.c\x00\x00b.c\x00\x00")
		} else {
			h.Write([]byte{3, 1, 0x08, 2, 0x0b, 5, 0x1e}) // path/string, dir/data1, MD5/data16
			h.Write([]byte{3})
			for _, f := range []string{"a.c", "a.c", "b.c"} {
				h.WriteString(f + "\x00\x00")
				h.Write(bytes.Repeat([]byte{f[0]}, 16)) // a digest of 'a's for a.c, 'b's for b.c
			}
		}
	} else {
		h.WriteString("/src\x00\x00")
		h.WriteString("a.c\x00\x01\x00\x00b.c\x00\x01\x00\x00\x00")
	}
	var unit bytes.Buffer
	binary.Write(&unit, binary.LittleEndian, u.version)
	if u.version >= 5 {
		unit.Write([]byte{8, 0})
	}
	binary.Write(&unit, binary.LittleEndian, uint32(h.Len()))
	unit.Write(h.Bytes())
	unit.Write(u.prog.Bytes())
	var out bytes.Buffer
	binary.Write(&out, binary.LittleEndian, uint32(unit.Len()))
	out.Write(unit.Bytes())
	return out.Bytes()
}

type lookupCase struct {
	addr uint64
	file string
	line int
	ok   bool
}

func TestStateMachine(t *testing.T) {
	tests := []struct {
		name    string
		unit    func(u *unitBuilder) []byte
		rows    []Row
		files   []string
		lookups []lookupCase
	}{
		{
			name: "simple",
			unit: func(u *unitBuilder) []byte {
				return u.setAddress(0x1000).line(4).copyRow().special(4, 1).pc(6).endSequence().bytes()
			},
			rows:  []Row{{0x1000, 0, 5}, {0x1004, 0, 6}},
			files: []string{"/src/a.c"},
			lookups: []lookupCase{
				{0xfff, "", 0, false}, {0x1000, "/src/a.c", 5, true}, {0x1003, "/src/a.c", 5, true},
				{0x1009, "/src/a.c", 6, true}, {0x100a, "", 0, false},
			},
		},
		{
			name: "two-lines-one-address",
			unit: func(u *unitBuilder) []byte {
				return u.setAddress(0x2000).line(6).copyRow().line(2).copyRow().special(3, 0).pc(1).endSequence().bytes()
			},
			rows:    []Row{{0x2000, 0, 7}, {0x2000, 0, 9}, {0x2003, 0, 9}},
			files:   []string{"/src/a.c"},
			lookups: []lookupCase{{0x2000, "/src/a.c", 9, true}},
		},
		{
			name: "not-stmt-only-in-lookup",
			unit: func(u *unitBuilder) []byte {
				return u.setAddress(0x3000).line(9).copyRow().negateStmt().special(2, 5).negateStmt().special(2, -5).pc(2).endSequence().bytes()
			},
			rows:    []Row{{0x3000, 0, 10}, {0x3004, 0, 10}},
			files:   []string{"/src/a.c"},
			lookups: []lookupCase{{0x3002, "/src/a.c", 15, true}, {0x3005, "/src/a.c", 10, true}},
		},
		{
			name: "zero-length-row-at-sequence-end",
			unit: func(u *unitBuilder) []byte {
				u.setAddress(0x4000).copyRow().special(8, 3).endSequence()
				return u.setAddress(0x4008).line(19).copyRow().pc(4).endSequence().bytes()
			},
			rows:    []Row{{0x4000, 0, 1}, {0x4008, 0, 20}},
			files:   []string{"/src/a.c"},
			lookups: []lookupCase{{0x4007, "/src/a.c", 1, true}, {0x4008, "/src/a.c", 20, true}, {0x400c, "", 0, false}},
		},
		{
			name: "second-file-line-zero-duplicates",
			unit: func(u *unitBuilder) []byte {
				u.setAddress(0x5000).file(2).line(2).copyRow().copyRow().special(1, -3)
				return u.special(1, 4).file(99).special(1, 0).pc(1).endSequence().bytes()
			},
			rows:  []Row{{0x5000, 0, 3}, {0x5002, 0, 4}},
			files: []string{"/src/b.c"},
			lookups: []lookupCase{
				{0x5001, "", 0, false}, // line 0
				{0x5003, "", 0, false}, // file 99 does not exist
			},
		},
	}
	headers := []struct {
		name string
		u    unitBuilder
	}{
		{"dwarf2", unitBuilder{version: 2}},
		{"dwarf4", unitBuilder{version: 4}},
		{"dwarf5", unitBuilder{version: 5}},
		{"dwarf5-md5", unitBuilder{version: 5, md5: true}},
	}
	for _, hd := range headers {
		for _, tt := range tests {
			t.Run(tt.name+"/"+hd.name, func(t *testing.T) {
				u := &unitBuilder{version: hd.u.version, md5: hd.u.md5}
				tab, err := parseLineSection(tt.unit(u), nil, nil, false)
				if err != nil {
					t.Fatal(err)
				}
				if !equalRows(tab.Rows, tt.rows) {
					t.Errorf("Rows = %v, want %v", tab.Rows, tt.rows)
				}
				if len(tab.Files) != len(tt.files) || (len(tt.files) > 0 && tab.Files[0] != tt.files[0]) {
					t.Errorf("Files = %q, want %q", tab.Files, tt.files)
				}
				for _, f := range tab.Files {
					sum, ok := tab.MD5(f)
					want := [16]byte(bytes.Repeat([]byte{f[len(f)-3]}, 16))
					if ok != hd.u.md5 || (ok && sum != want) {
						t.Errorf("MD5(%q) = %x, %v; want %x, %v", f, sum, ok, want, hd.u.md5)
					}
				}
				for _, l := range tt.lookups {
					file, line, ok := tab.Lookup(l.addr)
					if file != l.file || line != l.line || ok != l.ok {
						t.Errorf("Lookup(%#x) = %q, %d, %v, want %q, %d, %v", l.addr, file, line, ok, l.file, l.line, l.ok)
					}
				}
			})
		}
	}
}

func equalRows(a, b []Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestParseCorruptUnits is the "does not crash" table for section bytes.
func TestParseCorruptUnits(t *testing.T) {
	good := (&unitBuilder{version: 5}).setAddress(0x1000).line(4).copyRow().pc(2).endSequence().bytes()
	good4 := (&unitBuilder{version: 4}).setAddress(0x1000).line(4).copyRow().pc(2).endSequence().bytes()
	bad := map[string][]byte{
		"short-length":    {1, 0},
		"length-too-long": {0xff, 0, 0, 0, 5, 0},
		"dwarf64":         {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0},
		"version-1":       {2, 0, 0, 0, 1, 0},
		"version-9":       {2, 0, 0, 0, 9, 0},
		"header-too-long": patch(good, 6+2, 0xff),
		"line-range-0":    patch(good4, 4+2+4+4, 0),
		"huge-file-count": patch5FileCount(good),
		"bad-ext-length":  append(bytes.Clone(good[:len(good)-3]), 0, 0x7f, 1),
		"bad-set-address": fixLen(append(bytes.Clone(good[:len(good)-3]), 0, 3, lneSetAddress, 1, 2)),
		"truncated-leb":   fixLen(append(bytes.Clone(good), lnsAdvancePC, 0x80)),
	}
	for name, data := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := parseLineSection(data, nil, nil, false)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want a *DecodeError", err)
			}
		})
	}
	for n := range len(good) {
		parseLineSection(good[:n], nil, nil, false) // must not panic
		parseLineSection(fixLen(bytes.Clone(good[:max(n, 4)])), nil, nil, false)
	}
}

// patch returns a copy of b with b[i] = v.
func patch(b []byte, i int, v byte) []byte {
	out := bytes.Clone(b)
	out[i] = v
	return out
}

// patch5FileCount sets the file count of a unitBuilder v5 unit to 2^40.
func patch5FileCount(good []byte) []byte {
	i := bytes.Index(good, []byte{2, 1, 0x08, 2, 0x0b}) + 5
	out := append(bytes.Clone(good[:i]), 0x80, 0x80, 0x80, 0x80, 0x80, 0x20)
	return fixLen(append(out, good[i+1:]...))
}

// fixLen rewrites unit_length to cover the rest of b.
func fixLen(b []byte) []byte {
	if len(b) >= 4 {
		binary.LittleEndian.PutUint32(b, uint32(len(b)-4))
	}
	return b
}

func FuzzParseLineSection(f *testing.F) {
	for _, v := range []uint16{2, 3, 4, 5} {
		u := &unitBuilder{version: v}
		f.Add(u.setAddress(0x1000).line(4).copyRow().special(4, 1).negateStmt().special(2, 0).pc(6).endSequence().bytes(), []byte(nil))
	}
	f.Add([]byte{}, []byte{})
	f.Add([]byte{4, 0, 0, 0, 5, 0, 8, 0}, []byte("/x\x00"))
	f.Fuzz(func(t *testing.T, debugLine, debugLineStr []byte) {
		tab, err := parseLineSection(debugLine, debugLineStr, func(uint64) string { return "/comp" }, false)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("err %T is not a *DecodeError", err)
			}
			return
		}
		for i, r := range tab.Rows {
			if int(r.File) >= len(tab.Files) || r.Line == 0 {
				t.Fatalf("bad row %+v", r)
			}
			if i > 0 && tab.Rows[i-1].Addr > r.Addr {
				t.Fatal("rows not sorted")
			}
			tab.Lookup(r.Addr)
		}
		tab.GoRoot()
	})
}
