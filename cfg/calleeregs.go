package cfg

import (
	"sort"
	"sync"

	"golang.org/x/arch/x86/x86asm"

	"github.com/patchprof/patchprof/symtab"
)

// Which registers a direct call may change. The ABI lets a callee change
// every caller-saved register, and jump-table recovery forgets them all at
// a call; but GCC at -O2 allocates registers across the calls of a file
// (-fipa-ra): a caller keeps a table's base in %r10 across a call to a
// static helper that never writes %r10, and a table whose base comes round
// a loop through such a call read as unknown, its function left without a
// flow graph (cJSON's parse_string, calling parse_hex4). CalleeRegs reads
// what a function's code writes, transitively through its direct calls
// and jumps, so that the recovery keeps what the callee provably leaves.
//
// The reading errs one way only: an instruction it does not know to write
// exactly its register operands, an indirect call or jump, a call or jump
// to an address that is not a function's entry, a recursion, or bytes
// that do not decode, all count as writing every register.

// RegSet is a set of general-purpose register families, bit f for the
// family regFamily numbers f (0 RAX, 1 RCX, 2 RDX, 3 RBX, 4 RSP, 5 RBP,
// 6 RSI, 7 RDI, 8-15 R8-R15).
type RegSet uint16

// AllRegs is every family: what a call of unknown code may write.
const AllRegs RegSet = 0xffff

// CalleeRegs finds, for the functions of one file, the registers a call of
// each may write. It is safe for concurrent use (the flow graphs are built
// on every CPU) and remembers each function's answer.
type CalleeRegs struct {
	sym    *symtab.File
	starts []uint64 // function entries, sorted
	ends   []uint64 // ends[k] is the end of the function at starts[k]

	mu   sync.Mutex
	memo map[uint64]RegSet
}

// NewCalleeRegs returns the analysis of sym's functions.
func NewCalleeRegs(sym *symtab.File) *CalleeRegs {
	c := &CalleeRegs{sym: sym, memo: map[uint64]RegSet{}}
	fs := append([]symtab.Func(nil), sym.Funcs...)
	sort.Slice(fs, func(i, j int) bool { return fs[i].Addr < fs[j].Addr })
	for _, f := range fs {
		if f.Size == 0 || len(c.starts) > 0 && c.starts[len(c.starts)-1] == f.Addr {
			continue
		}
		c.starts = append(c.starts, f.Addr)
		c.ends = append(c.ends, f.Addr+f.Size)
	}
	return c
}

// maxCalleeDepth bounds how deep Writes follows calls: past it a callee
// counts as writing everything.
const maxCalleeDepth = 16

// Writes returns the registers a direct call to entry may change: those
// the code at entry, and the code it calls or jumps to, may write;
// AllRegs when entry is no function's or its code cannot be read.
func (c *CalleeRegs) Writes(entry uint64) RegSet {
	if c == nil {
		return AllRegs
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes(entry, map[uint64]bool{}, 0)
}

// writes is Writes under c.mu; open holds the functions being read (a
// recursion among them writes everything) and depth how many. Every
// answer is kept: one that met an open function or the depth bound is
// AllRegs, which is never wrong, only less precise.
func (c *CalleeRegs) writes(entry uint64, open map[uint64]bool, depth int) RegSet {
	if w, ok := c.memo[entry]; ok {
		return w
	}
	if open[entry] || depth > maxCalleeDepth {
		return AllRegs
	}
	k := sort.Search(len(c.starts), func(k int) bool { return c.starts[k] >= entry })
	if k == len(c.starts) || c.starts[k] != entry {
		return AllRegs
	}
	end := c.ends[k]
	code, ok := c.sym.Code(entry, int(end-entry))
	if !ok {
		return AllRegs
	}
	open[entry] = true
	defer delete(open, entry)
	var w RegSet
	for pc := entry; pc < end && w != AllRegs; {
		inst, n, err := decodeInst(code[pc-entry:])
		if err != nil || n == 0 {
			w = AllRegs
			break
		}
		next := pc + uint64(n)
		rel, direct := inst.Args[0].(x86asm.Rel)
		to := uint64(int64(next) + int64(rel))
		switch {
		case inst.Op == x86asm.CALL || inst.Op == x86asm.JMP:
			switch {
			case !direct:
				w = AllRegs
			case inst.Op == x86asm.JMP && to >= entry && to < end:
			default: // a call, or a jump out of the function
				w |= c.writes(to, open, depth+1)
			}
		case isJcc(inst.Op):
			if direct && (to < entry || to >= end) {
				w |= c.writes(to, open, depth+1)
			}
		default:
			w |= instWrites(&inst)
		}
		pc = next
	}
	c.memo[entry] = w
	return w
}

// instWrites returns the registers inst may write: its destination (the
// first operand in x86asm's order, both for XCHG) for the operations known
// to write no other register; none for those that write no register;
// AllRegs for the rest. RSP and RBP, which PUSH, POP and LEAVE change,
// are restored by any function that returns, and no caller-saved register.
func instWrites(inst *x86asm.Inst) RegSet {
	if writesNone[inst.Op] || isJcc(inst.Op) {
		return 0
	}
	if !writesDest[inst.Op] || inst.Op == x86asm.IMUL && inst.Args[1] == nil {
		return AllRegs
	}
	var w RegSet
	for k, a := range inst.Args {
		if k > 0 && inst.Op != x86asm.XCHG {
			break
		}
		if r, ok := a.(x86asm.Reg); ok {
			if f, _, ok := regFamily(r); ok {
				w |= 1 << f
			}
		}
	}
	return w
}

// writesNone are the operations that write no general-purpose register
// the caller could see (RET ends what can run of a path; the others read
// their operands, or write flags, memory or RSP only).
var writesNone = opSet(x86asm.NOP, x86asm.CMP, x86asm.TEST, x86asm.BT, x86asm.PUSH, x86asm.RET,
	x86asm.UD2, x86asm.HLT, x86asm.UCOMISD, x86asm.UCOMISS, x86asm.COMISD, x86asm.COMISS)

// writesDest are the operations whose only register result is their
// destination (XCHG: both operands). POP and LEAVE change RSP and RBP too.
var writesDest = opSet(
	x86asm.MOV, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.LEA,
	x86asm.ADD, x86asm.ADC, x86asm.SUB, x86asm.SBB, x86asm.AND, x86asm.OR, x86asm.XOR,
	x86asm.INC, x86asm.DEC, x86asm.NEG, x86asm.NOT,
	x86asm.SHL, x86asm.SHR, x86asm.SAR, x86asm.ROL, x86asm.ROR, x86asm.SHLD, x86asm.SHRD,
	x86asm.IMUL, x86asm.BTS, x86asm.BTR, x86asm.BTC, x86asm.BSF, x86asm.BSR,
	x86asm.BSWAP, x86asm.XCHG, x86asm.POP, x86asm.LEAVE,
	x86asm.SETA, x86asm.SETAE, x86asm.SETB, x86asm.SETBE, x86asm.SETE, x86asm.SETNE,
	x86asm.SETG, x86asm.SETGE, x86asm.SETL, x86asm.SETLE, x86asm.SETS, x86asm.SETNS,
	x86asm.SETO, x86asm.SETNO, x86asm.SETP, x86asm.SETNP,
	x86asm.CMOVA, x86asm.CMOVAE, x86asm.CMOVB, x86asm.CMOVBE, x86asm.CMOVE, x86asm.CMOVNE,
	x86asm.CMOVG, x86asm.CMOVGE, x86asm.CMOVL, x86asm.CMOVLE, x86asm.CMOVS, x86asm.CMOVNS,
	x86asm.CMOVO, x86asm.CMOVNO, x86asm.CMOVP, x86asm.CMOVNP,
	x86asm.MOVSD_XMM, x86asm.MOVSS, x86asm.MOVAPS, x86asm.MOVAPD, x86asm.MOVUPS, x86asm.MOVUPD,
	x86asm.MOVDQA, x86asm.MOVDQU, x86asm.MOVD, x86asm.MOVQ, x86asm.PXOR, x86asm.XORPS, x86asm.XORPD,
	x86asm.ADDSD, x86asm.SUBSD, x86asm.MULSD, x86asm.DIVSD, x86asm.ADDSS, x86asm.SUBSS, x86asm.MULSS, x86asm.DIVSS,
	x86asm.CVTSI2SD, x86asm.CVTSI2SS, x86asm.CVTTSD2SI, x86asm.CVTTSS2SI, x86asm.CVTSD2SS, x86asm.CVTSS2SD,
)

func opSet(ops ...x86asm.Op) map[x86asm.Op]bool {
	m := make(map[x86asm.Op]bool, len(ops))
	for _, op := range ops {
		m[op] = true
	}
	return m
}

// isJcc reports whether op is a conditional jump on the flags (not JCXZ
// and its kind, which read RCX, nor LOOP).
func isJcc(op x86asm.Op) bool {
	switch op {
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JNE,
		x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE, x86asm.JS, x86asm.JNS,
		x86asm.JO, x86asm.JNO, x86asm.JP, x86asm.JNP:
		return true
	}
	return false
}
