package relocate

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// A relocCase is one line of testdata/relocate.txt:
//
//	original hex <TAB> addr <TAB> slot <TAB> expected hex or "error: reason" [<TAB> # comment]
type relocCase struct {
	line       int
	code       []byte
	addr, slot uint64
	want       []byte // nil when an error is expected
	wantErr    string // the expected Reason, or a prefix of it
	comment    string
}

func readRelocCases(t testing.TB) []relocCase {
	t.Helper()
	f, err := os.Open("testdata/relocate.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []relocCase
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		text := s.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, "\t")
		if len(fields) < 4 {
			t.Fatalf("relocate.txt:%d: want 4 tab-separated fields, have %d", n, len(fields))
		}
		c := relocCase{line: n}
		if c.code, err = hex.DecodeString(fields[0]); err != nil {
			t.Fatalf("relocate.txt:%d: %v", n, err)
		}
		if c.addr, err = strconv.ParseUint(fields[1], 0, 64); err != nil {
			t.Fatalf("relocate.txt:%d: %v", n, err)
		}
		if c.slot, err = strconv.ParseUint(fields[2], 0, 64); err != nil {
			t.Fatalf("relocate.txt:%d: %v", n, err)
		}
		if r, ok := strings.CutPrefix(fields[3], "error: "); ok {
			c.wantErr = r
		} else if c.want, err = hex.DecodeString(fields[3]); err != nil {
			t.Fatalf("relocate.txt:%d: %v", n, err)
		}
		if len(fields) > 4 {
			c.comment = strings.TrimSpace(strings.TrimPrefix(fields[4], "#"))
		}
		cases = append(cases, c)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestRelocate(t *testing.T) {
	cases := readRelocCases(t)
	if len(cases) < 40 {
		t.Fatalf("only %d cases in relocate.txt", len(cases))
	}
	for _, c := range cases {
		name := fmt.Sprintf("line%d", c.line)
		d, err := Relocate(c.code, c.addr, c.slot)
		if c.want == nil {
			var re *Error
			switch {
			case err == nil:
				t.Errorf("%s %x (%s): relocated to %x, want error %q", name, c.code, c.comment, d.Code, c.wantErr)
			case !errors.Is(err, ErrNotRelocatable) || !errors.As(err, &re):
				t.Errorf("%s %x (%s): error %v is not a *Error wrapping ErrNotRelocatable", name, c.code, c.comment, err)
			case !strings.HasPrefix(re.Reason, c.wantErr):
				t.Errorf("%s %x (%s): reason %q, want %q", name, c.code, c.comment, re.Reason, c.wantErr)
			case re.Addr != c.addr:
				t.Errorf("%s %x (%s): error at %#x, want %#x", name, c.code, c.comment, re.Addr, c.addr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %x (%s): %v", name, c.code, c.comment, err)
			continue
		}
		if !bytes.Equal(d.Code, c.want) {
			t.Errorf("%s %x (%s):\n have %x\n want %x", name, c.code, c.comment, d.Code, c.want)
		}
		if d.Addr != c.addr || d.Slot != c.slot {
			t.Errorf("%s: Addr, Slot = %#x, %#x, want %#x, %#x", name, d.Addr, d.Slot, c.addr, c.slot)
		}
		if err := checkDisplaced(c.code, d); err != nil {
			t.Errorf("%s %x (%s): %v", name, c.code, c.comment, err)
		}
	}
}

// TestRelocateForms checks the form and the resume points of one instruction
// of each kind.
func TestRelocateForms(t *testing.T) {
	const addr, slot = 0x401000, 0x500000
	tests := []struct {
		hex    string
		form   Form
		rip    bool
		resume map[uint64]uint64 // offset in Code -> original address; others must be !ok
	}{
		{"488b0510000000", FormCopy, true, map[uint64]uint64{0: addr, 7: addr + 7}},                     // mov rax, [rip+0x10]
		{"f30f1efa", FormCopy, false, map[uint64]uint64{0: addr, 4: addr + 4}},                          // endbr64
		{"0f05", FormCopy, false, map[uint64]uint64{0: addr, 2: addr + 2}},                              // syscall
		{"c3", FormTransfer, false, map[uint64]uint64{0: addr}},                                         // ret
		{"ff2510000000", FormTransfer, true, map[uint64]uint64{0: addr}},                                // jmp [rip+0x10]
		{"eb10", FormJump, false, map[uint64]uint64{0: addr}},                                           // jmp +0x10
		{"7410", FormCond, false, map[uint64]uint64{0: addr, 6: addr + 2}},                              // je +0x10
		{"e210", FormLoop, false, map[uint64]uint64{0: addr, 2: addr + 2, 4: addr + 0x12, 9: addr + 2}}, // loop
		{"e810000000", FormCall, false, map[uint64]uint64{0: addr, 8: addr, 16: addr, 21: addr + 0x15}}, // call +0x10
		{"ffd0", FormCall, false, map[uint64]uint64{0: addr, 8: addr, 16: addr}},                        // call rax
		{"ff1510000000", FormCall, true, map[uint64]uint64{0: addr, 8: addr, 16: addr}},                 // call [rip+0x10]
	}
	for _, tt := range tests {
		code, _ := hex.DecodeString(tt.hex)
		d, err := Relocate(code, addr, slot)
		if err != nil {
			t.Errorf("%s: %v", tt.hex, err)
			continue
		}
		if d.Form != tt.form || d.RIPRelative != tt.rip || d.Len != len(code) {
			t.Errorf("%s: form %v, rip %v, len %d; want %v, %v, %d", tt.hex, d.Form, d.RIPRelative, d.Len, tt.form, tt.rip, len(code))
		}
		for off := uint64(0); off <= uint64(len(d.Code)); off++ {
			to, ok := d.Resume(slot + off)
			want, wantOK := tt.resume[off]
			if ok != wantOK || to != want {
				t.Errorf("%s: Resume(slot+%d) = %#x, %v; want %#x, %v", tt.hex, off, to, ok, want, wantOK)
			}
		}
		if _, ok := d.Resume(slot - 1); ok {
			t.Errorf("%s: Resume(slot-1) is ok", tt.hex)
		}
	}
}

func TestFormString(t *testing.T) {
	if s := FormCall.String(); s != "call" {
		t.Errorf("FormCall.String() = %q", s)
	}
	if s := Form(99).String(); s != "form(99)" {
		t.Errorf("Form(99).String() = %q", s)
	}
}

// TestRelocateErrorMessage checks the error names the address, the bytes and
// what happens next.
func TestRelocateErrorMessage(t *testing.T) {
	_, err := Relocate([]byte{0xCC, 0x90}, 0x401000, 0x500000)
	want := "instruction at 0x401000 (cc) cannot run out of line: int3 (the program's own breakpoint); its site keeps the classic cycle"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// TestRelocateCrashers feeds truncated and garbage inputs: each must return a
// *Error, never panic, never produce code.
func TestRelocateCrashers(t *testing.T) {
	inputs := []string{
		"",
		"0f",
		"0f38",
		"0f3a",
		"48",
		"66",
		"f0",
		"f3",
		"f30f1e",
		"c5",
		"c4",
		"c4e2",
		"62",
		"62f17c",
		"488b",
		"488b05",
		"488b0510",
		"488b05100000",
		"c7051000000001",
		"e8",
		"e8100000",
		"e9",
		"0f84",
		"0f841000",
		"ff",
		"ff15",
		"ff151000",
		"ff14",
		"ff54",
		"ff5424",
		"c2",
		"c208",
		"e2",
		"67",
		"67e2",
		"4848",
		"4866e9",
		"666666666666666666666666666666",
		"f0f0f0f0f0f0f0f0f0f0f0f0f0f0f090",
		"0f0b",
		"cc",
		"cd03",
		"f4",
		"0fff",
		"8fe87801",                       // an XOP prefix
		"62f17c486f0510000000",           // EVEX that x86asm does not know
		"c4e37d18",                       // VEX truncated before its ModRM
		"ffffffffffffffffffffffffffffff", // far call through memory, group 5 /7
		"d6",
		"0f04",
		"0f0e",
		"0f37",
	}
	for _, h := range inputs {
		code, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Relocate(code, 0x401000, 0x500000)
		if err == nil {
			t.Errorf("%s: relocated to %x, want an error", h, d.Code)
			continue
		}
		var re *Error
		if !errors.As(err, &re) || !errors.Is(err, ErrNotRelocatable) || re.Reason == "" {
			t.Errorf("%s: error %#v is not a *Error with a reason", h, err)
		}
	}
}

// TestRelocateLongInput checks that bytes after the instruction are ignored.
func TestRelocateLongInput(t *testing.T) {
	code := []byte{0x48, 0x8B, 0x05, 0x10, 0, 0, 0, 0xCC, 0xCC, 0xCC}
	d, err := Relocate(code, 0x401000, 0x401100)
	if err != nil {
		t.Fatal(err)
	}
	if d.Len != 7 || len(d.Code) != 12 {
		t.Errorf("Len %d, code %x", d.Len, d.Code)
	}
}

// TestRelocateReach relocates jmp [rip+0], whose effective address is
// addr+6 and which needs no jmp back, to slots at the edges of rel32 reach
// (Intel SDM vol. 2, 2.2.1.6: the displacement is a signed 32-bit value
// added to the address of the next instruction).
func TestRelocateReach(t *testing.T) {
	code := []byte{0xFF, 0x25, 0, 0, 0, 0}
	const addr = 0x7f0000000000
	for _, tc := range []struct {
		slot uint64
		ok   bool
	}{
		{addr + 0x80000000, true}, // displacement -2^31
		{addr + 0x80000001, false},
		{addr - 0x7FFFFFFF, true}, // displacement 2^31-1
		{addr - 0x80000000, false},
	} {
		d, err := Relocate(code, addr, tc.slot)
		if (err == nil) != tc.ok {
			t.Errorf("slot %#x: err %v, want ok %v", tc.slot, err, tc.ok)
			continue
		}
		if err == nil {
			if cerr := checkDisplaced(code, d); cerr != nil {
				t.Errorf("slot %#x: %v", tc.slot, cerr)
			}
		} else if !strings.HasPrefix(err.(*Error).Reason, ReasonOutOfRange) {
			t.Errorf("slot %#x: %v", tc.slot, err)
		}
	}
}

// errFake is what a recordingMemory with err set returns.
var errFake = errors.New("fake memory fault")

// fakeMemory is an address space of one mapping for TestDisplacedWrite: the
// bytes of [base, base+len(mem)), none of them int3, and the writes made.
type fakeMemory struct {
	base   uint64
	mem    []byte
	writes int
}

// newFakeMemory returns a fake of n nops at base.
func newFakeMemory(base uint64, n int) *fakeMemory {
	return &fakeMemory{base: base, mem: bytes.Repeat([]byte{0x90}, n)}
}

func (m *fakeMemory) WriteMemory(addr uint64, buf []byte) (int, error) {
	m.writes++
	if addr < m.base || addr-m.base > uint64(len(m.mem)) || uint64(len(buf)) > uint64(len(m.mem))-(addr-m.base) {
		return 0, fmt.Errorf("fake write [%#x, %#x) outside [%#x, %#x)", addr, addr+uint64(len(buf)), m.base, m.base+uint64(len(m.mem)))
	}
	return copy(m.mem[addr-m.base:], buf), nil
}

// at returns the byte at addr.
func (m *fakeMemory) at(addr uint64) byte { return m.mem[addr-m.base] }

type recordingMemory struct {
	addr uint64
	buf  []byte
	n    int // bytes to report written; -1 for all
	err  error
}

func (m *recordingMemory) ReadMemory(addr uint64, buf []byte) (int, error) {
	return 0, errors.New("not readable")
}

func (m *recordingMemory) WriteMemory(addr uint64, buf []byte) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	m.addr, m.buf = addr, append([]byte(nil), buf...)
	if m.n >= 0 {
		return m.n, nil
	}
	return len(buf), nil
}

func TestDisplacedWrite(t *testing.T) {
	d, err := Relocate([]byte{0xE8, 0x10, 0, 0, 0}, 0x401000, 0x401100)
	if err != nil {
		t.Fatal(err)
	}
	mem := newFakeMemory(0x401000, 2*4096)
	if err := d.Write(mem); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mem.mem[0x100:0x100+len(d.Code)], d.Code) || mem.writes != 1 {
		t.Errorf("fake holds %x after %d writes, want %x after 1", mem.mem[0x100:0x100+len(d.Code)], mem.writes, d.Code)
	}
	if mem.at(0x401000) == Int3 {
		t.Error("Write touched the original")
	}

	rec := &recordingMemory{n: 3}
	if err := d.Write(rec); err == nil || !strings.Contains(err.Error(), "short write") {
		t.Errorf("short write: %v", err)
	}
	rec = &recordingMemory{err: errFake}
	if err := d.Write(rec); !errors.Is(err, errFake) {
		t.Errorf("failed write: %v, want it wrapped", err)
	}
}

// FuzzRelocate checks that Relocate never panics, refuses with a
// *Error, and that everything it relocates passes checkDisplaced.
func FuzzRelocate(f *testing.F) {
	for _, c := range readRelocCases(f) {
		f.Add(c.code, c.addr, c.slot)
	}
	f.Add([]byte{0x67, 0xE3, 0x80}, uint64(0x401000), uint64(0x7fff0000))
	f.Add([]byte{0xFF, 0x14, 0x24}, uint64(0x401000), uint64(0x7fff0000))
	f.Add([]byte{0xFF, 0x54, 0x24, 0x7C}, uint64(0x401000), uint64(0x500000))
	f.Add([]byte{0xFF, 0x94, 0x24, 0xF8, 0xFF, 0xFF, 0x7F}, uint64(0x401000), uint64(0x500000))
	f.Fuzz(func(t *testing.T, code []byte, addr, slot uint64) {
		d, err := Relocate(code, addr, slot)
		if err != nil {
			var re *Error
			if !errors.As(err, &re) || !errors.Is(err, ErrNotRelocatable) || re.Reason == "" {
				t.Fatalf("%x: error %#v", code, err)
			}
			return
		}
		if err := checkDisplaced(code, d); err != nil {
			t.Fatalf("%x at %#x to %#x: %v\ncode %x", code, addr, slot, err, d.Code)
		}
	})
}

// TestMeasure checks that Measure gives every case of relocate.txt the
// length and form (or the error) Relocate does, and that a Relocate after
// Measures, whose Displaced values it reuses, returns what a fresh one
// would: each case's slot code, resume points, exits and absolute words.
func TestMeasure(t *testing.T) {
	cases := readRelocCases(t)
	fresh := make([]*Displaced, len(cases))
	for i, c := range cases {
		fresh[i], _ = Relocate(c.code, c.addr, c.addr)
	}
	for round := range 2 {
		for i, c := range cases {
			form, n, err := Measure(c.code, c.addr)
			want := fresh[i]
			switch {
			case want == nil && err == nil:
				t.Errorf("line%d %x: Measure gave form %v, %d bytes; Relocate refuses it", c.line, c.code, form, n)
			case want != nil && err != nil:
				t.Errorf("line%d %x: Measure: %v; Relocate relocates it", c.line, c.code, err)
			case want != nil && (form != want.Form || n != want.Len):
				t.Errorf("line%d %x: Measure gave form %v, %d bytes; Relocate %v, %d", c.line, c.code, form, n, want.Form, want.Len)
			}
			// Reusing what the Measures gave back.
			if d, _ := Relocate(c.code, c.addr, c.addr); !reflect.DeepEqual(d, want) {
				t.Errorf("round %d, line%d %x: Relocate after Measure:\n have %+v\n want %+v", round, c.line, c.code, d, want)
			}
		}
	}
}
