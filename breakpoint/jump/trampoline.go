package jump

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/patchprof/patchprof/breakpoint/relocate"
)

// The in-process engine (--engine jump) replaces a site's first bytes with a
// 5-byte jmp to a trampoline that counts the hit in the target itself and
// runs the displaced instructions, so a hit costs a memory increment instead
// of a ptrace stop. The trampoline is
//
//	addq $1, %gs:COUNTER        the thread's own counter for the site
//	                            (keepflags.go where the flags are live)
//	<displaced instructions>    relocated for their new address
//	jmp SITE+LEN                unless the last one transfers control
//
// The counter lives in the thread's slab, addressed through the GS segment
// base, which the monitor gives every thread of the process: per-thread
// counters are exact without a locked instruction (measured in
// ../shared/research: a shared lock add costs 4-12x, a shared plain add loses
// counts). The add writes the arithmetic flags: a site where they are live
// counts with a longer update that writes none (Site.KeepFlags,
// keepflags.go). A trampoline never shares a cache line with its counter:
// the counters are in a separate mapping.

// TrampolineSize bounds one trampoline: an entry check, the counter
// update, a pending call's record, the displaced instructions (a whole
// block of up to MaxHostLen bytes, or a host of a short site) each grown
// by relocation (an emulated call as the last), and the jmp back. A
// function's entry block displaced whole with its entry check (about 100
// bytes) must fit, or its indirect callers go unknown. Callers pack
// trampolines by their lengths, in regions with room for this many bytes
// a site.
const TrampolineSize = 384

// counterLen is the length of addq $1, %gs:disp32 (65 48 83 04 25 disp32 01:
// Intel SDM vol. 2, ADD, REX.W 83 /0 ib, with a SIB byte for an absolute
// disp32 and the GS segment override).
const counterLen = 10

// appendCounter appends addq $1, %gs:off (counterLen bytes) to c.
func appendCounter(c []byte, off uint32) []byte {
	c = append(c, 0x65, 0x48, 0x83, 0x04, 0x25)
	c = binary.LittleEndian.AppendUint32(c, off)
	return append(c, 0x01)
}

// A Trampoline is the code that serves one jump site.
type Trampoline struct {
	Addr uint64 // runtime address of the site
	At   uint64 // runtime address of the trampoline
	Len  int    // bytes displaced at Addr (Site.Len)
	Code []byte // the trampoline's code, to write at At
	// Patch is what goes over the site: jmp rel32 to At, then int3 over the
	// rest of the displaced bytes (nothing may run them: a thread found
	// there traps, and the monitor moves it to the trampoline).
	Patch []byte
	// Orig are the original bytes at [Addr, Addr+Len), to put back.
	Orig []byte
	// Landing, for a short site (SetShort), is where the 5-byte jmp to the
	// trampoline goes, in the dead bytes of the block before the site;
	// LandingJmp is that jmp. Patch is then a jmp rel8 to Landing.
	Landing    uint64
	LandingJmp []byte

	keep  bool // the counter update keeps the flags (keepflags.go)
	pre   int  // bytes of the entry check before the counter update
	preRw map[int]Rewind
	// overflow is the offset just past the entry check's int3, 0 for
	// none (CallOverflow).
	overflow int
	pendAt   []int    // offsets of the pending call's stores, after the count
	gate     bool     // a gate: it stops the thread, counts nothing (gate.go)
	starts   []int    // offset in Code of each displaced instruction
	addrs    []uint64 // its original address
	last     *relocate.Displaced
	exits    []Exit
	// abs are the places of Code that hold absolute addresses of the
	// original code (MovedTo shifts them).
	abs []relocate.AbsWord
}

// An Exit is a jump of a trampoline back to original code: its rel32
// displacement is at runtime address At, and it goes to original address
// To. Where To is a site whose own patch is a jump to its trampoline, the
// monitor aims the exit at that trampoline directly (Aim): the thread
// goes where the site's patch would take it one jump sooner. A loop whose
// blocks are all patched then runs in its trampolines, one jump per block
// as in the original code, instead of two.
type Exit struct {
	At, To uint64
	// Via is the trampoline the exit is aimed at instead of To, 0 for
	// none (Aim).
	Via uint64
}

// Exits returns the trampoline's jumps back to original code.
func (tr *Trampoline) Exits() []Exit { return tr.exits }

// Stale returns the exits aimed at a trampoline other than the one via
// gives for their target (0 when the site there is not patched): they are
// to be aimed back at original code (Aim(k, 0)) before a thread runs them.
func (tr *Trampoline) Stale(via func(to uint64) uint64) []int {
	var ks []int
	for k, x := range tr.exits {
		if x.Via != 0 && via(x.To) != x.Via {
			ks = append(ks, k)
		}
	}
	return ks
}

// Aim aims exit k at via, a trampoline of the site at its original target
// (0: at the target itself), in Code, and returns the displacement's new
// bytes for a trampoline already written; false when via is out of reach
// (nothing changes).
func (tr *Trampoline) Aim(k int, via uint64) ([]byte, bool) {
	x := &tr.exits[k]
	to := via
	if via == 0 {
		to = x.To
	}
	v, ok := relocate.Rel32(to, x.At+4)
	if !ok {
		return nil, false
	}
	x.Via = via
	off := x.At - tr.At
	binary.LittleEndian.PutUint32(tr.Code[off:], uint32(v))
	return tr.Code[off : off+4], true
}

// ErrTrampolineTooLong reports displaced code that does not fit in
// TrampolineSize.
var ErrTrampolineTooLong = errors.New("trampoline longer than TrampolineSize")

// BuildTrampoline builds the trampoline at runtime address at for the jump
// site js at runtime address addr, whose original code (from addr on, at
// least js.Len+js.Tail bytes) is code; counter is the offset of the site's
// counter in a thread's slab. The instructions are decoded as they are
// relocated; js.Insns, when set, are the lengths they must have. It
// returns a *relocate.Error when a displaced instruction cannot run out of
// line, or the instructions do not end where js says.
func BuildTrampoline(code []byte, addr, at uint64, js Site, counter uint32) (*Trampoline, error) {
	if js.Len < 2 || len(code) < js.Len+js.Tail {
		return nil, fmt.Errorf("jump: BuildTrampoline at %#x: not a jump site (%d bytes displaced)", addr, js.Len)
	}
	if counter > 1<<31-8 {
		return nil, fmt.Errorf("jump: BuildTrampoline at %#x: counter offset %#x beyond disp32", addr, counter)
	}
	tr := &Trampoline{Addr: addr, At: at, Len: js.Len, Orig: append([]byte(nil), code[:js.Len]...)}
	c := make([]byte, 0, TrampolineSize)
	if js.Entry != nil {
		if js.Gate || js.KeepFlags {
			return nil, fmt.Errorf("jump: BuildTrampoline at %#x: an entry check needs the plain counter update", addr)
		}
		c, tr.preRw, tr.overflow = appendEntryCheck(c, *js.Entry)
		tr.pre = len(c)
	}
	switch {
	case js.Gate:
		c = append(c, gateCode...)
		tr.gate = true
	case js.KeepFlags:
		c = appendKeepCounter(c, counter)
		tr.keep = true
	default:
		c = appendCounter(c, counter)
	}
	if js.Pend != nil {
		var ret int
		c, tr.pendAt, ret = appendPend(c, *js.Pend)
		if ret >= 0 {
			tr.abs = append(tr.abs, relocate.AbsWord{Lo: ret})
		}
	}
	if js.TableEntry != nil {
		if js.Gate || js.KeepFlags {
			return nil, fmt.Errorf("jump: BuildTrampoline at %#x: a table entry counted where the flags are live", addr)
		}
		c = appendEntryCounter(c, *js.TableEntry)
	}
	run := js.Len - js.Dead // the displaced instructions' bytes
	if js.Dead < 0 || run < 1 || (js.Dead > 0 && js.Tail > 0) {
		return nil, fmt.Errorf("jump: BuildTrampoline at %#x: %d dead bytes of %d", addr, js.Dead, js.Len)
	}
	total := run + js.Tail
	for k, off := 0, 0; off < total; k++ {
		pc := addr + uint64(off)
		slot := at + uint64(len(c))
		d, err := relocate.Relocate(code[off:], pc, slot)
		if err != nil {
			return nil, err
		}
		n := d.Len
		switch {
		case js.Insns != nil && (k >= len(js.Insns) || n != js.Insns[k]):
			return nil, &relocate.Error{Addr: pc, Bytes: append([]byte(nil), code[off:off+n]...), Reason: relocate.ReasonDisagree}
		case off < run && off+n > run, off+n > total:
			return nil, &relocate.Error{Addr: pc, Bytes: append([]byte(nil), code[off:off+n]...), Reason: "an instruction across the end of the displaced bytes"}
		}
		last := off+n == total
		if last && len(js.Edges) > 0 {
			if d, err = countArcs(d, js.Edges); err != nil {
				return nil, err
			}
		}
		body := d.Code
		if !last {
			// Not the last: it must run on into the next displaced
			// instruction, not jump back to the original next one. The
			// last of the patched bytes may be a conditional jump when a
			// tail follows: its taken side is an exit.
			cond := d.Form == relocate.FormCond && off+n == run && js.Tail > 0
			if (d.Form != relocate.FormCopy && !cond) || len(body) < JmpLen || body[len(body)-JmpLen] != 0xE9 {
				return nil, &relocate.Error{Addr: pc, Bytes: append([]byte(nil), code[off:off+n]...), Reason: "control transfer before the last displaced instruction"}
			}
			body = body[:len(body)-JmpLen]
		} else {
			tr.last = d
		}
		for _, x := range d.Exits {
			if int(x.Off) < len(body) { // not the jump back dropped above
				tr.exits = append(tr.exits, Exit{At: at + uint64(len(c)) + uint64(x.Off), To: x.To})
			}
		}
		for _, w := range d.Abs {
			w.Lo += len(c)
			if w.Hi != 0 {
				w.Hi += len(c)
			}
			tr.abs = append(tr.abs, w)
		}
		tr.starts = append(tr.starts, len(c))
		tr.addrs = append(tr.addrs, pc)
		c = append(c, body...)
		off += n
	}
	if len(c) > TrampolineSize {
		return nil, fmt.Errorf("%w: %d bytes at %#x", ErrTrampolineTooLong, len(c), addr)
	}
	tr.Code = c
	if js.Len < JmpLen {
		return tr, nil // a short site: SetShort makes its patch
	}
	rel, ok := relocate.Rel32(at, addr+JmpLen)
	if !ok {
		return nil, &relocate.Error{Addr: addr, Bytes: tr.Orig, Reason: fmt.Sprintf("%s: trampoline %#x", relocate.ReasonOutOfRange, at)}
	}
	tr.Patch = make([]byte, js.Len)
	tr.Patch[0] = 0xE9
	binary.LittleEndian.PutUint32(tr.Patch[1:], uint32(rel))
	for k := JmpLen; k < js.Len; k++ {
		tr.Patch[k] = relocate.Int3
	}
	return tr, nil
}

// SetShort makes the patch of a site shorter than a jmp rel32: a jmp rel8
// (Intel SDM vol. 2, JMP, EB cb) to landing, where LandingJmp, a jmp rel32
// to the trampoline, is to be written: in the dead bytes of a host block
// whose whole code runs in its own trampoline.
func (tr *Trampoline) SetShort(landing uint64) error {
	d := int64(landing - (tr.Addr + 2))
	if d != int64(int8(d)) {
		return &relocate.Error{Addr: tr.Addr, Bytes: tr.Orig, Reason: fmt.Sprintf("%s: landing %#x", relocate.ReasonOutOfRange, landing)}
	}
	rel, ok := relocate.Rel32(tr.At, landing+JmpLen)
	if !ok {
		return &relocate.Error{Addr: tr.Addr, Bytes: tr.Orig, Reason: fmt.Sprintf("%s: trampoline %#x", relocate.ReasonOutOfRange, tr.At)}
	}
	tr.Landing = landing
	tr.LandingJmp = []byte{0xE9, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(tr.LandingJmp[1:], uint32(rel))
	tr.Patch = make([]byte, tr.Len)
	tr.Patch[0], tr.Patch[1] = 0xEB, byte(int8(d))
	for k := 2; k < tr.Len; k++ {
		tr.Patch[k] = relocate.Int3
	}
	return nil
}

// Relocated returns the original addresses of the instructions the
// trampoline runs, in order: the displaced ones, then its tail's.
func (tr *Trampoline) Relocated() []uint64 { return tr.addrs }

// Contains reports whether pc is inside the trampoline's code.
func (tr *Trampoline) Contains(pc uint64) bool {
	return pc >= tr.At && pc < tr.At+uint64(len(tr.Code))
}

// Covers reports whether pc is inside the displaced bytes, after their
// first: where no thread may be when the patch is written.
func (tr *Trampoline) Covers(pc uint64) bool {
	return pc > tr.Addr && pc < tr.Addr+uint64(tr.Len)
}

// A TrampolinePoint says where a thread whose PC is in a trampoline stands.
type TrampolinePoint uint8

const (
	// BeforeCount: at the counter update, nothing done yet; equivalent to
	// the site itself.
	BeforeCount TrampolinePoint = iota
	// InCount: inside a counter update that keeps the flags, whose stack
	// pointer and %rax are not the program's: equivalent to the site once
	// the thread is put back there (Rewind), never by moving its PC
	// alone.
	InCount
	// Counted: the hit is counted and no displaced instruction has run;
	// equivalent to the site once the count is taken back.
	Counted
	// InDisplaced: at the start of a later displaced instruction, or at a
	// point of the last one with an original equivalent (Resume).
	InDisplaced
	// Inside: no original equivalent (an emulated call half done).
	Inside
)

// Where maps a PC in the trampoline to the original address a thread there
// is equivalent to, and says which kind of point it is. A synchronous fault
// is precise, so the faulting instruction's original address is where the
// program expects to see it.
func (tr *Trampoline) Where(pc uint64) (orig uint64, p TrampolinePoint) {
	if pc == tr.At || pc == tr.At+uint64(tr.pre) {
		return tr.Addr, BeforeCount
	}
	if _, ok := tr.Rewind(pc); ok {
		return tr.Addr, InCount
	}
	off := int(pc - tr.At)
	if slices.Contains(tr.pendAt, off) {
		// Counted, the displaced code not begun: the stores run again.
		return tr.Addr, Counted
	}
	for k, s := range tr.starts {
		if off != s {
			continue
		}
		if k == 0 {
			return tr.Addr, Counted
		}
		return tr.addrs[k], InDisplaced
	}
	if tr.last != nil {
		if to, ok := tr.last.Resume(pc); ok {
			return to, InDisplaced
		}
	}
	return 0, Inside
}

// CallOverflow reports whether a thread that trapped with its PC at pc
// stopped at the int3 of tr's entry check, taken when the pending call's
// caller found every slot of the entry taken (CallSlots): its key is in
// the low 32 bits of %rax, the call is the monitor's to count, and the
// thread goes on from pc, after the count.
func (tr *Trampoline) CallOverflow(pc uint64) bool {
	return tr.overflow > 0 && pc == tr.At+uint64(tr.overflow)
}

// Equivalent returns the trampoline address equivalent to original address
// orig, the start of a displaced instruction after the first: where a thread
// found inside the displaced bytes goes on.
func (tr *Trampoline) Equivalent(orig uint64) (uint64, bool) {
	for k, a := range tr.addrs {
		if a == orig && k > 0 {
			return tr.At + uint64(tr.starts[k]), true
		}
	}
	return 0, false
}
