package cfg

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// An Image gives the bytes of the executable by link-time address: the
// contents of every loadable segment, code and read-only data alike. cfg
// reads jump tables through it. ELFImage is one; a fake in tests is
// another.
type Image interface {
	// ReadImage fills buf with the bytes at link-time address addr and
	// returns how many it read; an error when fewer than len(buf).
	ReadImage(addr uint64, buf []byte) (int, error)
}

// A CodeImage is an Image that also tells which addresses hold
// executable code. A jump-table entry outside the function is accepted
// (as an edge to Outside) only when the Image is a CodeImage and the entry
// is code: gcc moves cold cases to a separate foo.cold function.
type CodeImage interface {
	Image
	IsCode(addr uint64) bool
}

// Options is the input of Build: one function's code and how to interpret
// its calls and jump tables.
type Options struct {
	Name string // the function's name, for errors and Graph.Name
	Addr uint64 // link-time address of Code[0], the function's entry
	Code []byte // the function's bytes, [Addr, Addr+len(Code)) (symtab.File.Code)

	// Image reads jump tables outside the function. When nil, every
	// indirect jump through a table makes the function unrecoverable.
	Image Image

	// CalleeName names the function at a direct call or jump target
	// (resolving PLT stubs to the library function they reach), or
	// returns "". When nil, calls are unnamed.
	CalleeName func(addr uint64) string

	// CalleeWrites returns the registers a direct call to target may
	// change (CalleeRegs.Writes), for jump-table recovery across calls to
	// functions that leave some caller-saved register as it was. When
	// nil, a call may change every caller-saved register (the ABI's rule).
	CalleeWrites func(target uint64) RegSet

	// NoReturn reports whether a call to target (named name, possibly "";
	// target 0 when unknown: a call through a GOT slot Image names)
	// never returns. When nil, DefaultNoReturn(name) is used.
	NoReturn func(target uint64, name string) bool

	// SplitCalls ends a block after every call, as GCC's profiling graph
	// does (a call may not return: exit, longjmp, an exception), so that
	// the return is an edge of its own (Return, from a TermCall block) and the code after the call a block that counts only the
	// returns. Line counts derived the gcov way need it.
	SplitCalls bool

	// LandingPads are the link-time addresses of the function's exception
	// landing pads (ELFLandingPads finds C++ ones): code only the unwinder
	// enters. Each starts a block with Landing set, decoded like the
	// entry, so a pad after a call that does not return (__cxa_throw,
	// _Unwind_Resume) is code, not Dead. Addresses outside the function
	// are ignored; one inside an instruction makes it unrecoverable.
	LandingPads []uint64
}

// Instruction kinds, as far as control flow cares.
const (
	kNone    uint8 = iota // not an instruction start
	kPlain                // falls through to the next instruction
	kCall                 // direct call
	kCallInd              // indirect call
	kCallNR               // call that does not return
	kJcc                  // conditional branch
	kJmp                  // direct jump
	kJmpInd               // indirect jump
	kRet                  // return
	kTrap                 // never continues
)

// flag bits of builder.flag, one byte per code byte.
const (
	fLeader  uint8 = 1 << iota // a block starts here
	fQueued                    // decoding from here was requested
	fLanding                   // a landing pad: entered from outside the function's own flow
)

// A branch is a direct control transfer found while decoding.
type branch struct {
	off    uint32 // offset of the branch instruction
	target uint64 // its target address
}

// A builder is the state of one Build: what decoding has found so far, per
// code byte, and the graph of the last round (jump tables and landing
// pads found in a round queue more code for the next).
type builder struct {
	o     Options
	end   uint64
	kind  []uint8 // per code byte: instruction kind at an instruction start, kNone elsewhere
	back  []uint8 // per code byte: 1 + distance to the start of the instruction covering it; 0 if not covered
	flag  []uint8
	work  []uint32
	jumps []branch // direct jumps and conditional branches (target may be outside)
	calls []Call   // Block filled in at the end
	inds  []uint32 // indirect jumps (offsets), resolved or not
	table map[uint32]*Table
	tail  map[uint32]bool // indirect jumps that are tail calls through memory
	// ptrTail: indirect jumps read as tail calls through a function
	// pointer this round (a function that takes label addresses may read
	// them differently once more of it is decoded).
	ptrTail map[uint32]bool
	settle  int // rounds in which only computed gotos changed
	evals   int // instructions the machine evaluated for the jump being read (maxEvals)
	err     *Error
	g       *Graph // the graph of the last round

	predOf    *Graph // the graph predStart and predList describe
	predStart []int32
	predList  []int
	factsOf   *Graph // the graph facts describe
	facts     [][16]fact
	escapesOf *Graph // the graph escapes was computed for
	escapes   bool   // frameEscapes
}

// Build recovers the control-flow graph of one function. It returns a
// *Error (wrapping one of the Err* sentinels) when the function's flow
// cannot be recovered without guessing; it never panics.
func Build(o Options) (g *Graph, err error) {
	defer func() {
		// x86asm is not documented to panic, but a decoder bug must not
		// take patchprof down with it.
		if p := recover(); p != nil {
			g, err = nil, &Error{Func: o.Name, Addr: o.Addr, Err: ErrUndecodable, Detail: fmt.Sprintf("decoder panicked: %v", p)}
		}
	}()
	if len(o.Code) == 0 {
		return nil, &Error{Func: o.Name, Addr: o.Addr, Err: ErrEmpty}
	}
	if len(o.Code) >= 1<<31 || o.Addr+uint64(len(o.Code)) < o.Addr {
		return nil, &Error{Func: o.Name, Addr: o.Addr, Err: ErrTruncated, Detail: "function bounds out of range"}
	}
	n := len(o.Code)
	b := &builder{o: o, end: o.Addr + uint64(n)}
	mem := make([]uint8, 3*n)
	b.kind, b.back, b.flag = mem[:n:n], mem[n:2*n:2*n], mem[2*n:]
	b.flag[0] |= fLeader
	b.queue(0)
	for _, pad := range o.LandingPads {
		if off, ok := b.inside(pad); ok {
			b.land(off)
		}
	}
	for {
		b.decode()
		if b.err != nil {
			return nil, b.err
		}
		if err := b.checkTargets(); err != nil {
			return nil, err
		}
		b.graph()
		grew, err := b.resolveTables()
		if err != nil {
			return nil, err
		}
		if !grew && !b.landingPads() {
			break
		}
	}
	if err := b.recheckTables(); err != nil {
		return nil, err
	}
	if err := b.checkGaps(); err != nil {
		return nil, err
	}
	return b.g, nil
}

// fail records the first error, at offset off; decoding stops at the next
// check of b.err, so the error reported is the first one met.
func (b *builder) fail(off int, sentinel error, detail string) {
	if b.err == nil {
		b.err = &Error{Func: b.o.Name, Addr: b.o.Addr + uint64(off), Err: sentinel, Detail: detail}
	}
}

// queue asks for decoding from off, once.
func (b *builder) queue(off uint32) {
	if b.flag[off]&fQueued == 0 {
		b.flag[off] |= fQueued
		b.work = append(b.work, off)
	}
}

// inside returns the offset of addr in the function.
func (b *builder) inside(addr uint64) (uint32, bool) {
	if addr < b.o.Addr || addr >= b.end {
		return 0, false
	}
	return uint32(addr - b.o.Addr), true
}

// decode follows control flow from every queued offset, recording the
// instructions it meets, until the work list is empty.
func (b *builder) decode() {
	for len(b.work) > 0 && b.err == nil {
		off := int(b.work[len(b.work)-1])
		b.work = b.work[:len(b.work)-1]
		b.run(off)
	}
}

// run decodes straight-line code from off until an instruction that does
// not fall through, or an instruction decoded before.
func (b *builder) run(off int) {
	code := b.o.Code
	for {
		if off >= len(code) {
			// The previous instruction falls through past the end.
			b.fail(off, ErrFallsOff, "")
			return
		}
		if b.back[off] != 0 {
			if b.back[off] != 1 {
				// Reached by fall-through or a branch: inside another
				// instruction (checkTargets reports branches with their
				// own message; here it is a fall-through).
				b.fail(off, ErrMidInstruction, fmt.Sprintf("instruction at %#x overlaps it", b.o.Addr+uint64(off-int(b.back[off])+1)))
			}
			return
		}
		inst, n, ok := b.claim(off)
		if !ok {
			return
		}
		k, ok := b.classify(off, n, &inst)
		if !ok {
			return
		}
		b.kind[off] = k
		switch k {
		case kPlain, kCall, kCallInd:
			off += n
			continue
		case kJcc:
			if off+n >= len(code) {
				b.fail(off+n, ErrFallsOff, "conditional branch is the last instruction")
				return
			}
			b.flag[off+n] |= fLeader
			off += n
			continue
		}
		return
	}
}

// claim decodes the instruction at off, not decoded before, and marks its
// n bytes as its own. It records the failure and returns false when the
// bytes do not decode or overlap an instruction decoded before.
func (b *builder) claim(off int) (inst x86asm.Inst, n int, ok bool) {
	code := b.o.Code
	inst, n, err := decodeInst(code[off:])
	if err != nil {
		if err == x86asm.ErrTruncated && len(code)-off < maxInstLen {
			b.fail(off, ErrTruncated, "")
		} else {
			b.fail(off, ErrUndecodable, fmt.Sprintf("bytes % x", code[off:min(off+maxInstLen, len(code))]))
		}
		return inst, 0, false
	}
	for i := 0; i < n; i++ {
		if b.back[off+i] != 0 {
			b.fail(off+i, ErrMidInstruction, fmt.Sprintf("instruction at %#x overlaps it", b.o.Addr+uint64(off)))
			return inst, 0, false
		}
	}
	for i := 0; i < n; i++ {
		b.back[off+i] = uint8(i + 1)
	}
	return inst, n, true
}

// classify returns the kind of inst, the n-byte instruction at off, and
// records its branch target or call. It records the failure and returns
// false for a branch control flow cannot follow.
func (b *builder) classify(off, n int, inst *x86asm.Inst) (uint8, bool) {
	next := b.o.Addr + uint64(off+n)
	switch inst.Op {
	case x86asm.RET, x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ:
		return kRet, true
	case x86asm.UD0, x86asm.UD1, x86asm.UD2, x86asm.HLT:
		return kTrap, true
	case x86asm.JMP:
		if rel, ok := inst.Args[0].(x86asm.Rel); ok {
			b.branchTo(off, next+uint64(int64(rel)))
			return kJmp, true
		}
		b.inds = append(b.inds, uint32(off))
		return kJmpInd, true
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JNE,
		x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE, x86asm.JO, x86asm.JNO,
		x86asm.JP, x86asm.JNP, x86asm.JS, x86asm.JNS,
		x86asm.JCXZ, x86asm.JECXZ, x86asm.JRCXZ,
		x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE, x86asm.XBEGIN:
		rel, ok := inst.Args[0].(x86asm.Rel)
		if !ok {
			b.fail(off, ErrUndecodable, "conditional branch without a relative target")
			return kNone, false
		}
		b.branchTo(off, next+uint64(int64(rel)))
		return kJcc, true
	case x86asm.INT:
		if b.onlyPaddingFrom(off + n) {
			// INT3 or INT $3 ending a function: Go assembly's crash
			// (runtime.abort, the end of systemstack).
			return kTrap, true
		}
	case x86asm.LJMP, x86asm.LCALL:
		b.fail(off, ErrJumpTable, "far jump or call")
		return kNone, false
	case x86asm.CALL:
		return b.call(off, n, inst), true
	}
	return kPlain, true
}

// call records the call inst, the n-byte instruction at off, and returns
// its kind: kCall, kCallInd, or kCallNR when it does not return.
func (b *builder) call(off, n int, inst *x86asm.Inst) uint8 {
	addr := b.o.Addr + uint64(off)
	next := addr + uint64(n)
	c := Call{Addr: addr, Next: next}
	k := kCallInd
	if rel, ok := inst.Args[0].(x86asm.Rel); ok {
		k = kCall
		c.Target = next + uint64(int64(rel))
		if b.o.CalleeName != nil {
			c.Name = b.o.CalleeName(c.Target)
		}
		if b.o.NoReturn != nil {
			c.NoReturn = b.o.NoReturn(c.Target, c.Name)
		} else {
			c.NoReturn = DefaultNoReturn(c.Name)
		}
	} else if name := b.gotCallee(next, inst); name != "" {
		// -fno-plt: `call *exit@GOTPCREL(%rip)` is as much a call of
		// exit as a call of its PLT stub; the target stays unknown.
		c.Name = name
		if b.o.NoReturn != nil {
			c.NoReturn = b.o.NoReturn(0, name)
		} else {
			c.NoReturn = DefaultNoReturn(name)
		}
	}
	if !c.NoReturn && b.onlyPaddingFrom(off+n) {
		// Nothing but padding (or the end) follows: the callee
		// cannot return here, whatever its name.
		c.NoReturn = true
	}
	if c.NoReturn {
		k = kCallNR
	}
	b.calls = append(b.calls, c)
	return k
}

// A gotImage is an Image that names the symbol a GOT slot is bound to
// (ELFImage).
type gotImage interface {
	GOTName(slot uint64) string
}

// gotCallee names the function an indirect call through a RIP-relative
// GOT slot reaches (inst ends at next), or "" for any other call or
// when the Image cannot name the slot.
func (b *builder) gotCallee(next uint64, inst *x86asm.Inst) string {
	m, ok := inst.Args[0].(x86asm.Mem)
	if !ok || m.Base != x86asm.RIP || m.Index != 0 || m.Segment != 0 {
		return ""
	}
	gi, ok := b.o.Image.(gotImage)
	if !ok {
		return ""
	}
	return gi.GOTName(next + uint64(m.Disp))
}

// branchTo records a direct jump or branch at off to target.
func (b *builder) branchTo(off int, target uint64) {
	b.jumps = append(b.jumps, branch{off: uint32(off), target: target})
	if t, ok := b.inside(target); ok {
		b.flag[t] |= fLeader
		b.queue(t)
	}
}

// onlyPaddingFrom reports whether the bytes from off to the end of the
// function are all padding (possibly none).
func (b *builder) onlyPaddingFrom(off int) bool {
	code := b.o.Code
	for off < len(code) {
		n := paddingLen(code[off:])
		if n == 0 {
			return false
		}
		off += n
	}
	return true
}

// checkTargets verifies that every branch target inside the function is
// an instruction start.
func (b *builder) checkTargets() error {
	for _, j := range b.jumps {
		if t, ok := b.inside(j.target); ok && b.back[t] != 1 {
			return &Error{Func: b.o.Name, Addr: j.target, Err: ErrMidInstruction,
				Detail: fmt.Sprintf("branch at %#x", b.o.Addr+uint64(j.off))}
		}
	}
	return nil
}
