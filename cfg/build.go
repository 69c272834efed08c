package cfg

import (
	"fmt"
	"sort"

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

	// NoReturn reports whether a call to target (named name, possibly "")
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
	err   *Error
	g     *Graph // the graph of the last round

	predOf    *Graph // the graph predStart and predList describe
	predStart []int32
	predList  []int
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
	if err := b.checkGaps(); err != nil {
		return nil, err
	}
	return b.g, nil
}

func (b *builder) fail(off int, sentinel error, detail string) {
	if b.err == nil {
		b.err = &Error{Func: b.o.Name, Addr: b.o.Addr + uint64(off), Err: sentinel, Detail: detail}
	}
}

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
		addr := b.o.Addr + uint64(off)
		inst, n, err := decodeInst(code[off:])
		if err != nil {
			if err == x86asm.ErrTruncated && len(code)-off < maxInstLen {
				b.fail(off, ErrTruncated, "")
			} else {
				b.fail(off, ErrUndecodable, fmt.Sprintf("bytes % x", code[off:min(off+maxInstLen, len(code))]))
			}
			return
		}
		for i := 0; i < n; i++ {
			if b.back[off+i] != 0 {
				b.fail(off+i, ErrMidInstruction, fmt.Sprintf("instruction at %#x overlaps it", addr))
				return
			}
		}
		for i := 0; i < n; i++ {
			b.back[off+i] = uint8(i + 1)
		}
		next := addr + uint64(n)
		k := kPlain
		switch inst.Op {
		case x86asm.RET, x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ:
			k = kRet
		case x86asm.UD0, x86asm.UD1, x86asm.UD2, x86asm.HLT:
			k = kTrap
		case x86asm.JMP:
			if rel, ok := inst.Args[0].(x86asm.Rel); ok {
				k = kJmp
				b.branchTo(off, next+uint64(int64(rel)))
			} else {
				k = kJmpInd
				b.inds = append(b.inds, uint32(off))
			}
		case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JNE,
			x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE, x86asm.JO, x86asm.JNO,
			x86asm.JP, x86asm.JNP, x86asm.JS, x86asm.JNS,
			x86asm.JCXZ, x86asm.JECXZ, x86asm.JRCXZ,
			x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE, x86asm.XBEGIN:
			rel, ok := inst.Args[0].(x86asm.Rel)
			if !ok {
				b.fail(off, ErrUndecodable, "conditional branch without a relative target")
				return
			}
			k = kJcc
			b.branchTo(off, next+uint64(int64(rel)))
		case x86asm.INT:
			if b.onlyPaddingFrom(off + n) {
				// INT3 or INT $3 ending a function: Go assembly's crash
				// (runtime.abort, the end of systemstack).
				k = kTrap
			}
		case x86asm.LJMP, x86asm.LCALL:
			b.fail(off, ErrJumpTable, "far jump or call")
			return
		case x86asm.CALL:
			c := Call{Addr: addr, Next: next}
			k = kCallInd
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

// checkGaps classifies the bytes no instruction covers: padding (nop or
// int3, as compilers align functions and loop heads) is counted and
// skipped; anything else is data or unreachable code, and the function is
// not recoverable. [Larus and Ball 1994, 3.4]
func (b *builder) checkGaps() error {
	code := b.o.Code
	afterFinal := false // the current gap follows a call that does not return, or a trap
	for off := 0; off < len(code); {
		if b.back[off] != 0 {
			off++
			continue
		}
		if off > 0 && b.back[off-1] != 0 {
			k := b.kind[off-int(b.back[off-1])]
			afterFinal = k == kCallNR || k == kTrap
		}
		n := paddingLen(code[off:])
		if n == 0 && allZero(code[off:]) {
			// Zeros to the end: section alignment fill after a
			// function whose symbol has no size (_init).
			n = len(code) - off
		}
		if n == 0 {
			if d := b.deadCode(off); afterFinal && d > 0 {
				b.g.Dead += d
				off += d
				continue
			}
			return &Error{Func: b.o.Name, Addr: b.o.Addr + uint64(off), Err: ErrData,
				Detail: fmt.Sprintf("bytes % x", code[off:min(off+8, len(code))])}
		}
		for i := 0; i < n; i++ {
			if off+i < len(code) && b.back[off+i] != 0 {
				// Padding that runs into code: the instruction decoded as
				// padding overlaps a real one.
				return &Error{Func: b.o.Name, Addr: b.o.Addr + uint64(off), Err: ErrData,
					Detail: "unreached bytes overlap an instruction"}
			}
		}
		b.g.Padding += n
		off += n
	}
	return nil
}

// deadCode returns the length of the unreached bytes at off when they
// decode cleanly up to the next reached instruction or the end. checkGaps
// accepts them only after a call that does not return (or a trap): code a
// compiler left after a call it did not know to be final (Go's runtime
// calling panicdivide, say). It returns 0 for anything else.
func (b *builder) deadCode(off int) int {
	code := b.o.Code
	end := off
	for end < len(code) && b.back[end] == 0 {
		_, n, err := decodeInst(code[end:])
		if err != nil {
			return 0
		}
		for i := 1; i < n && end+i < len(code); i++ {
			if b.back[end+i] != 0 {
				return 0 // overlaps a reached instruction (a landing pad inside it)
			}
		}
		end += n
	}
	if end > len(code) || end < len(code) && b.back[end] != 1 {
		return 0 // runs into the middle of a reached instruction
	}
	return end - off
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// land makes off a landing pad: a leader entered from outside the
// function's own flow, decoded like the entry.
func (b *builder) land(off uint32) {
	b.flag[off] |= fLeader | fLanding
	b.queue(off)
}

// deferReturn is the function whose call starts a Go landing pad.
const deferReturn = "runtime.deferreturn"

// landingPads queues the landing pads no control flow reaches: in Go, a
// function with defers has a block starting with CALL runtime.deferreturn
// where the runtime resumes it after a recovered panic (the pc recorded in
// its _func.deferreturn). They are entries from outside, like the
// function's own entry. It reports whether it found a new one.
func (b *builder) landingPads() bool {
	if b.o.CalleeName == nil {
		return false
	}
	code := b.o.Code
	found := false
	for off := 0; off < len(code); {
		if b.back[off] != 0 {
			off++
			continue
		}
		if n := paddingLen(code[off:]); n > 0 {
			off += n
			continue
		}
		inst, n, err := decodeInst(code[off:])
		if err == nil && inst.Op == x86asm.CALL {
			if rel, ok := inst.Args[0].(x86asm.Rel); ok {
				target := b.o.Addr + uint64(off+n) + uint64(int64(rel))
				if name := b.o.CalleeName(target); name == deferReturn || name == deferReturn+".abi0" {
					b.land(uint32(off))
					found = true
				}
			}
		}
		// Skip to the next covered byte: the rest of this gap is not a
		// candidate until it is reached.
		for off < len(code) && b.back[off] == 0 {
			off++
		}
	}
	if found {
		b.decode()
	}
	return found
}

// graph cuts the decoded instructions into blocks and records their edges
// in b.g.
func (b *builder) graph() {
	code := b.o.Code
	g := &Graph{Name: b.o.Name, Addr: b.o.Addr, End: b.end}
	nb := 0
	prevEnds := true // the previous instruction ends a block (or there is none)
	for off := 0; off < len(code); {
		k := b.kind[off]
		if k == kNone {
			off++
			prevEnds = true
			continue
		}
		if prevEnds || b.flag[off]&fLeader != 0 {
			nb++
		}
		n := b.instLen(off)
		prevEnds = b.ends(k)
		off += n
	}
	g.Blocks = make([]Block, 0, nb)
	var cur *Block
	prevEnds = true
	for off := 0; off < len(code); {
		k := b.kind[off]
		if k == kNone {
			off++
			prevEnds = true
			continue
		}
		addr := b.o.Addr + uint64(off)
		if prevEnds || b.flag[off]&fLeader != 0 {
			g.Blocks = append(g.Blocks, Block{Start: addr, Landing: b.flag[off]&fLanding != 0})
			cur = &g.Blocks[len(g.Blocks)-1]
		}
		n := b.instLen(off)
		cur.Insts++
		cur.Last = addr
		cur.End = addr + uint64(n)
		prevEnds = b.ends(k)
		off += n
	}
	// Edges, block by block in address order.
	jumpAt := make(map[uint32]uint64, len(b.jumps))
	for _, j := range b.jumps {
		jumpAt[j.off] = j.target
	}
	g.Edges = make([]Edge, 0, 2*len(g.Blocks))
	for i := range g.Blocks {
		bl := &g.Blocks[i]
		bl.firstEdge = int32(len(g.Edges))
		last := uint32(bl.Last - b.o.Addr)
		add := func(kind EdgeKind, target uint64) {
			to := Outside
			if _, ok := b.inside(target); ok {
				j, ok := g.BlockAt(target)
				if !ok || g.Blocks[j].Start != target {
					return // not yet a block start: a later round adds it
				}
				to = j
			}
			for _, e := range g.Edges[bl.firstEdge:] {
				if e.To == to && e.Target == target {
					return // one edge per successor
				}
			}
			g.Edges = append(g.Edges, Edge{From: i, To: to, Kind: kind, Target: target})
		}
		switch b.kind[last] {
		case kCall, kCallInd:
			if b.o.SplitCalls {
				bl.Term = TermCall
				add(Return, bl.End)
			} else {
				bl.Term = TermFall
				add(Fallthrough, bl.End)
			}
		case kPlain:
			bl.Term = TermFall
			add(Fallthrough, bl.End)
		case kJcc:
			bl.Term = TermCond
			add(Taken, jumpAt[last])
			add(Fallthrough, bl.End)
		case kJmp:
			bl.Term = TermJump
			if _, ok := b.inside(jumpAt[last]); !ok {
				bl.Term = TermTailCall
			}
			add(Taken, jumpAt[last])
		case kJmpInd:
			if t := b.table[last]; t != nil {
				bl.Term = TermTable
				for _, target := range t.Targets {
					add(JumpTable, target)
				}
			} else {
				bl.Term = TermTailCall
			}
		case kRet:
			bl.Term = TermReturn
		case kCallNR:
			bl.Term = TermNoReturn
		case kTrap:
			bl.Term = TermTrap
		}
		bl.numEdges = int32(len(g.Edges)) - bl.firstEdge
	}
	sort.Slice(b.calls, func(i, j int) bool { return b.calls[i].Addr < b.calls[j].Addr })
	g.Calls = b.calls
	for i := range g.Calls {
		g.Calls[i].Block, _ = g.BlockAt(g.Calls[i].Addr)
	}
	g.Tables = g.Tables[:0]
	for _, off := range b.inds {
		if t := b.table[off]; t != nil {
			g.Tables = append(g.Tables, *t)
		}
	}
	sort.Slice(g.Tables, func(i, j int) bool { return g.Tables[i].Jump < g.Tables[j].Jump })
	b.g = g
}

// ends reports whether an instruction of kind k ends its block.
func (b *builder) ends(k uint8) bool {
	return k >= kCallNR || (b.o.SplitCalls && (k == kCall || k == kCallInd))
}

// instLen returns the length of the instruction starting at off.
func (b *builder) instLen(off int) int {
	n := 1
	for off+n < len(b.back) && b.back[off+n] == uint8(n+1) {
		n++
	}
	return n
}
