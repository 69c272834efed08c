package relocate

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
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
	if mem.at(0x401000) == int3 {
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

// unknownToX86asm returns the length of an instruction at the start of code
// that x86asm cannot decode or decodes wrong, 0 for others.
func unknownToX86asm(code []byte) int {
	switch {
	case symtab.IsENDBR(code):
		return 4
	case symtab.IsVZERO(code):
		return 3
	}
	return 0
}

// A step is one instruction of a slot's code, decoded.
type step struct {
	off  int
	pc   uint64
	inst x86asm.Inst
	raw  []byte
}

func decodeSlot(d *Displaced) ([]step, error) {
	var steps []step
	for off := 0; off < len(d.Code); {
		pc := d.Slot + uint64(off)
		if n := unknownToX86asm(d.Code[off:]); n > 0 {
			steps = append(steps, step{off: off, pc: pc, raw: d.Code[off : off+n]})
			off += n
			continue
		}
		inst, err := x86asm.Decode(d.Code[off:], 64)
		if err != nil || inst.Op == 0 {
			return nil, fmt.Errorf("slot code %x does not decode at +%d: %v", d.Code, off, err)
		}
		steps = append(steps, step{off: off, pc: pc, inst: inst, raw: d.Code[off : off+inst.Len]})
		off += inst.Len
	}
	return steps, nil
}

// relTarget returns the absolute target of a direct branch at pc.
func relTarget(inst x86asm.Inst, pc uint64) (uint64, bool) {
	rel, ok := inst.Args[0].(x86asm.Rel)
	if !ok {
		return 0, false
	}
	return pc + uint64(inst.Len) + uint64(int64(rel)), true
}

// ripEA returns the absolute address of raw's RIP-relative operand at pc,
// read from the encoding (x86asm's AVX decoder hides it).
func ripEA(raw []byte, pc uint64) (uint64, bool) {
	l, reason := scanLayout(raw)
	if reason != "" || !l.rip {
		return 0, false
	}
	disp := int64(int32(binary.LittleEndian.Uint32(raw[l.modrm+1:])))
	return pc + uint64(len(raw)) + uint64(disp), true
}

// sameButDisp reports whether a and b are equal except for the 4 bytes of a
// RIP-relative displacement, and whether both address the same memory when
// a runs at pcA and b at pcB.
func sameOperand(a []byte, pcA uint64, b []byte, pcB uint64) error {
	if len(a) != len(b) {
		return fmt.Errorf("copy %x has another length than %x", b, a)
	}
	eaA, ripA := ripEA(a, pcA)
	eaB, ripB := ripEA(b, pcB)
	if ripA != ripB {
		return fmt.Errorf("copy %x rip-relative %v, original %x %v", b, ripB, a, ripA)
	}
	if !ripA {
		if !bytes.Equal(a, b) {
			return fmt.Errorf("copy %x differs from %x", b, a)
		}
		return nil
	}
	if eaA != eaB {
		return fmt.Errorf("copy %x at %#x addresses %#x, original at %#x addresses %#x", b, pcB, eaB, pcA, eaA)
	}
	l, _ := scanLayout(a)
	d := l.modrm + 1
	if !bytes.Equal(a[:d], b[:d]) || !bytes.Equal(a[d+4:], b[d+4:]) {
		return fmt.Errorf("copy %x differs from %x outside the displacement", b, a)
	}
	return nil
}

// checkDisplaced checks, by decoding, that d's code does what the original
// instruction did at d.Addr: the same operation on the same absolute
// addresses, branches to the same absolute targets, the original return
// address pushed by an emulated call, no instruction added that writes the
// flags or a register other than RSP, and resume points that are exact.
func checkDisplaced(orig []byte, d *Displaced) error {
	if len(d.Code) > MaxSlot {
		return fmt.Errorf("code %x is %d bytes, more than MaxSlot", d.Code, len(d.Code))
	}
	if d.Len <= 0 || d.Len > len(orig) {
		return fmt.Errorf("Len %d outside the input's %d bytes", d.Len, len(orig))
	}
	orig = orig[:d.Len]
	next := d.Addr + uint64(d.Len)
	steps, err := decodeSlot(d)
	if err != nil {
		return err
	}
	if to, ok := d.Resume(d.Slot); !ok || to != d.Addr {
		return fmt.Errorf("Resume(Slot) = %#x, %v; want Addr", to, ok)
	}
	// Every instruction but the copied one must leave the flags and every
	// register but RSP alone.
	for i, s := range steps {
		copied := d.Form == FormCopy || d.Form == FormTransfer || d.Form == FormLoop
		if i == 0 && copied {
			continue
		}
		switch s.inst.Op {
		case x86asm.JMP, x86asm.MOV, x86asm.LEA:
		case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG, x86asm.JGE, x86asm.JL,
			x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO, x86asm.JP, x86asm.JS:
		default:
			return fmt.Errorf("added instruction %v at +%d", s.inst, s.off)
		}
		if s.inst.Op == x86asm.MOV {
			if m, ok := s.inst.Args[0].(x86asm.Mem); !ok || m.Base != x86asm.RSP {
				return fmt.Errorf("added %v writes something other than the stack", s.inst)
			}
		}
		if s.inst.Op == x86asm.LEA && s.inst.Args[0] != x86asm.RSP {
			return fmt.Errorf("added %v writes a register other than rsp", s.inst)
		}
	}
	jmpTo := func(s step, want uint64) error {
		if s.inst.Op != x86asm.JMP {
			return fmt.Errorf("at +%d: %v, want jmp %#x", s.off, s.inst, want)
		}
		if t, ok := relTarget(s.inst, s.pc); !ok || t != want {
			return fmt.Errorf("at +%d: jmp to %#x, want %#x", s.off, t, want)
		}
		return nil
	}
	resumeAt := func(s step, want uint64) error {
		if to, ok := d.Resume(s.pc); !ok || to != want {
			return fmt.Errorf("Resume(slot+%d) = %#x, %v; want %#x", s.off, to, ok, want)
		}
		return nil
	}

	if n := unknownToX86asm(orig); n > 0 {
		if d.Form != FormCopy || len(steps) != 2 || !bytes.Equal(steps[0].raw, orig[:n]) {
			return fmt.Errorf("%x relocated as %v %x", orig[:n], d.Form, d.Code)
		}
		return errors.Join(jmpTo(steps[1], next), resumeAt(steps[1], next))
	}
	oi, err := x86asm.Decode(orig, 64)
	if err != nil {
		return fmt.Errorf("original does not decode: %v", err)
	}
	switch d.Form {
	case FormCopy, FormTransfer:
		want := 2
		if d.Form == FormTransfer {
			want = 1
		}
		if len(steps) != want {
			return fmt.Errorf("%v: %d instructions in %x", d.Form, len(steps), d.Code)
		}
		if steps[0].inst.Op != oi.Op {
			return fmt.Errorf("copied %v, original %v", steps[0].inst, oi)
		}
		if err := sameOperand(orig, d.Addr, steps[0].raw, d.Slot); err != nil {
			return err
		}
		if d.Form == FormCopy {
			return errors.Join(jmpTo(steps[1], next), resumeAt(steps[1], next))
		}
		return nil

	case FormJump:
		t, _ := relTarget(oi, d.Addr)
		if len(steps) != 1 {
			return fmt.Errorf("jump: %x", d.Code)
		}
		return jmpTo(steps[0], t)

	case FormCond:
		t, _ := relTarget(oi, d.Addr)
		if len(steps) != 2 || steps[0].inst.Op != oi.Op {
			return fmt.Errorf("cond: %x for %v", d.Code, oi)
		}
		if got, _ := relTarget(steps[0].inst, steps[0].pc); got != t || steps[0].inst.PCRel != 4 {
			return fmt.Errorf("cond: %v goes to %#x, want %#x", steps[0].inst, got, t)
		}
		return errors.Join(jmpTo(steps[1], next), resumeAt(steps[1], next))

	case FormLoop:
		t, _ := relTarget(oi, d.Addr)
		if len(steps) != 4 || steps[0].inst.Op != oi.Op || steps[0].inst.Len != oi.Len || !bytes.Equal(steps[0].raw[:oi.Len-1], orig[:oi.Len-1]) {
			return fmt.Errorf("loop: %x for %v", d.Code, oi)
		}
		// Taken: to the instruction that jumps to the target. Not taken:
		// the next instruction skips it to the jump back.
		taken, _ := relTarget(steps[0].inst, steps[0].pc)
		skip, _ := relTarget(steps[1].inst, steps[1].pc)
		if taken != steps[2].pc || steps[1].inst.Op != x86asm.JMP || skip != steps[3].pc {
			return fmt.Errorf("loop: %x: taken to %#x, skip to %#x", d.Code, taken, skip)
		}
		return errors.Join(jmpTo(steps[2], t), jmpTo(steps[3], next),
			resumeAt(steps[1], next), resumeAt(steps[2], t), resumeAt(steps[3], next))

	case FormCall:
		if len(steps) != 4 {
			return fmt.Errorf("call: %x", d.Code)
		}
		lo, hi := steps[0].inst, steps[1].inst
		m0, _ := lo.Args[0].(x86asm.Mem)
		m1, _ := hi.Args[0].(x86asm.Mem)
		i0, _ := lo.Args[1].(x86asm.Imm)
		i1, _ := hi.Args[1].(x86asm.Imm)
		if lo.Op != x86asm.MOV || hi.Op != x86asm.MOV || m0.Disp != -8 || m1.Disp != -4 || lo.MemBytes != 4 || hi.MemBytes != 4 ||
			uint64(uint32(i0))|uint64(uint32(i1))<<32 != next {
			return fmt.Errorf("call: %v; %v do not store %#x at [rsp-8]", lo, hi, next)
		}
		lea := steps[2].inst
		if m, ok := lea.Args[1].(x86asm.Mem); lea.Op != x86asm.LEA || !ok || m.Base != x86asm.RSP || m.Disp != -8 || m.Index != 0 || lea.DataSize != 64 {
			return fmt.Errorf("call: %v does not lower rsp by 8", lea)
		}
		if err := errors.Join(resumeAt(steps[1], d.Addr), resumeAt(steps[2], d.Addr)); err != nil {
			return err
		}
		j := steps[3]
		if t, ok := relTarget(oi, d.Addr); ok {
			return errors.Join(jmpTo(j, t), resumeAt(j, t))
		}
		if _, ok := d.Resume(j.pc); ok {
			return fmt.Errorf("call: an indirect jmp has a resume point")
		}
		if j.inst.Op != x86asm.JMP {
			return fmt.Errorf("call: %v, want an indirect jmp", j.inst)
		}
		switch a := oi.Args[0].(type) {
		case x86asm.Reg:
			if j.inst.Args[0] != a {
				return fmt.Errorf("call %v became jmp %v", a, j.inst.Args[0])
			}
		case x86asm.Mem:
			b, ok := j.inst.Args[0].(x86asm.Mem)
			if !ok || a.Segment != b.Segment || a.Base != b.Base || a.Index != b.Index || a.Scale != b.Scale && a.Index != 0 {
				return fmt.Errorf("call %v became jmp %v", oi, j.inst)
			}
			switch {
			case a.Base == x86asm.RIP:
				eaA := d.Addr + uint64(d.Len) + uint64(a.Disp)
				eaB := j.pc + uint64(j.inst.Len) + uint64(b.Disp)
				if eaA != eaB {
					return fmt.Errorf("call through %#x became jmp through %#x", eaA, eaB)
				}
			case a.Base == x86asm.RSP:
				if b.Disp != a.Disp+8 {
					return fmt.Errorf("call %v became jmp %v: rsp moved by 8", oi, j.inst)
				}
			case a.Disp != b.Disp:
				return fmt.Errorf("call %v became jmp %v", oi, j.inst)
			}
		default:
			return fmt.Errorf("call with operand %v", oi.Args[0])
		}
		return nil
	}
	return fmt.Errorf("unknown form %v", d.Form)
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
