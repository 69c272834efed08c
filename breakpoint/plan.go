package breakpoint

import (
	"sort"
	"strings"

	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/lineinfo"
	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
)

// PlanOptions selects what to plant.
type PlanOptions struct {
	// Lines counts source lines: derived from block and arc counts (see
	// planlines.go) for every function whose flow cfg recovers, from a
	// site at every line-table row for the others.
	Lines bool
	Funcs bool // plant at function entries
	// RowSites counts every function's lines at its rows, with the
	// cursor's previous-row rule (see Cursor), as the functions whose
	// flow cannot be recovered are always counted.
	RowSites bool

	// FuncFilter keeps functions for which it returns true (any of the names of
	// an address may match). Nil keeps all.
	FuncFilter func(name string) bool
	// FileFilter keeps source files for which it returns true. Nil keeps all.
	FileFilter func(path string) bool
	// SkipFile leaves out files that are not the user's (the Go runtime and
	// standard library) unless FileFilter asked for them. Nil skips nothing.
	SkipFile func(path string) bool
	// GoPrologue moves each function's entry site past Go's stack-check
	// prologue (CMPQ SP, 16(R14); JBS morestack). A goroutine re-executes the
	// prologue after its stack grows and after a cooperative preemption (the
	// runtime poisons the stack guard), so only the first instruction after it
	// runs exactly once per call. Rows inside the prologue are not planted.
	GoPrologue bool
	// SkipFunc leaves out functions that are not the user's by name and file
	// (Go's ABI wrappers and package inits carry no file of the runtime's).
	// Nil skips nothing.
	SkipFunc func(name, file string) bool
	// Notify lists link-time addresses of internal sites (see
	// SiteSpec.Notify): the dynamic linker's notification point, planted in
	// ld.so whether or not its code is profiled.
	Notify []uint64
	// Resume lists link-time addresses of internal sites where preempted
	// goroutines resume (SiteSpec.Resume), for the in-process engine.
	Resume []uint64

	// Blocks plants at the start of every basic block of the kept
	// functions (their flow graphs built with cfg), counting blocks and the
	// edges between them (Table.SetBlocks). A function whose flow cannot be
	// recovered gets a Plan.BlockErrors entry and no block sites.
	Blocks bool
	// CFGImage reads the jump tables of switch statements (cfg.Options.Image);
	// nil makes every function with one unrecoverable.
	CFGImage cfg.Image
	// CalleeName names call targets for cfg (cfg.Options.CalleeName), so
	// that calls to functions that do not return end their block.
	CalleeName func(addr uint64) string
	// LandingPads maps a function's start to its exception landing pads
	// (cfg.ELFLandingPads; cfg.Options.LandingPads), so that C++ catch
	// blocks and cleanups are blocks. Nil is allowed.
	LandingPads map[uint64][]uint64

	// Subprograms are the functions .debug_info describes (lineinfo.
	// Subprograms), sorted by LowPC: where gcov puts a C function's entry
	// count and whether it returns a value. Nil is allowed.
	Subprograms []lineinfo.Subprogram
	// Jumps plans the in-process engine's jumps (Plan.Jumps, as PlanJumps
	// would), beside the line model.
	Jumps bool

	// Source reads a source file's lines (nil, or ok false, when it
	// cannot): gcov counts a `case` or `default` label as a statement
	// of the block it starts, and DWARF gives such a label no address,
	// so the lines above a jump target are read for them.
	Source func(path string) (lines []string, ok bool)
}

// A FuncInfo describes one function of the executable, index-aligned with
// symtab.File.Funcs.
type FuncInfo struct {
	Name    string
	Aliases []string
	Addr    uint64 // link-time entry
	File    string // where DWARF puts the entry, "" if unknown
	Line    int    // the declarator's line for C and C++ (DW_AT_decl_line), else the entry's
	Planted bool   // a function site counts its calls
	Site    uint64 // where that site is: Addr, or past Go's stack-check prologue
}

// A LineRef is one source line that has at least one planted row.
type LineRef struct {
	File string
	Line int
}

// A DroppedRow is a line-table row that was not planted, and why.
type DroppedRow struct {
	Addr   uint64
	File   string
	Line   int
	Reason string
}

// Reasons for dropping a row.
const (
	ReasonNotInsnStart  = "not an instruction start"
	ReasonUndecodable   = "after undecodable bytes"
	ReasonOutsideFunc   = "outside any function symbol"
	ReasonNotExecutable = "not in an executable segment"
	ReasonGoPrologue    = "inside Go's stack-check prologue (re-executed when the stack grows)"
)

// A Plan is the result of planning: the site table and what its indexes mean.
type Plan struct {
	Table *Table
	Funcs []FuncInfo
	Lines []LineRef
	// LineFuncs is, per line of Lines, the index in Funcs of the function
	// whose code it was first found in.
	LineFuncs []int32
	Dropped   []DroppedRow
	// Graphs are the flow graphs of the block-counted functions (with
	// PlanOptions.Blocks), as given to Table.SetBlocks.
	Graphs []FuncGraph
	// BlockErrors are the kept functions whose flow could not be
	// recovered (with PlanOptions.Blocks).
	BlockErrors []BlockError

	Jumps JumpPlan // the in-process engine's plan, with PlanOptions.Jumps

	lineIndex map[LineRef]int32 // index of each LineRef in Lines
	model     *lineModel        // lines derived from blocks (see planlines.go)
	targets   *symtab.Targets   // where the module's code may branch (PlanJumps)
}

// NewPlan chooses the sites for one executable. lt may be nil when only
// functions are counted. Every site is the start of an instruction: line rows
// are checked against a linear decode of their function, function sites are
// symbol addresses.
func NewPlan(sym *symtab.File, lt *lineinfo.Table, opt PlanOptions) *Plan {
	p := &Plan{Funcs: make([]FuncInfo, len(sym.Funcs))}
	keepFile := func(path string) bool {
		if opt.FileFilter != nil {
			return opt.FileFilter(path)
		}
		return opt.SkipFile == nil || !opt.SkipFile(path)
	}
	keepFunc := make([]bool, len(sym.Funcs))
	for i, f := range sym.Funcs {
		fi := FuncInfo{Name: f.Name, Aliases: f.Aliases, Addr: f.Addr}
		if lt != nil {
			// A Go runtime function has no file when its unit was
			// left unread (SkipFunc tells it by its name).
			if file, line, ok := lt.LookupRead(f.Addr); ok {
				fi.File, fi.Line = file, line
				// gcov, lcov and debuggers put a C function on its
				// declarator line, not on the opening brace below it.
				if s := subprogramAt(opt.Subprograms, f.Addr); s != nil && lineinfo.IsC(s.Lang) && s.DeclLine > 0 && s.DeclLine <= line {
					fi.Line = s.DeclLine
				}
			}
		}
		p.Funcs[i] = fi
		keep := opt.FuncFilter == nil || opt.FuncFilter(f.Name)
		for _, a := range f.Aliases {
			keep = keep || opt.FuncFilter(a)
		}
		if keep && opt.SkipFunc != nil && opt.SkipFunc(f.Name, fi.File) {
			keep = false
		}

		if keep && fi.File != "" {
			keep = keepFile(fi.File)
		} else if keep && opt.FileFilter != nil {
			keep = false // a file was asked for and this function has none
		}
		keepFunc[i] = keep
	}

	var specs []SiteSpec
	if opt.Funcs {
		for i := range sym.Funcs {
			if !keepFunc[i] {
				continue
			}
			entry, _ := p.entryOf(sym, i, opt.GoPrologue)
			code, ok := sym.Code(entry, 16)
			if !ok {
				code, ok = sym.Code(entry, 1)
			}
			if !ok {
				continue
			}
			s := SiteSpec{Addr: entry, Kind: KindFunc, Func: int32(i), Entry: true}
			markRep(&s, code)
			specs = append(specs, s)
			p.Funcs[i].Planted = true
			p.Funcs[i].Site = entry
		}
	}
	// A function the compiler made up (an implicit C++ constructor or
	// destructor) has no lines of the user's: gcov shows none. GCC marks
	// a lambda's body artificial too, but gcov counts it (GCC's coverage
	// notes exempt lambdas).
	noLines := make([]bool, len(sym.Funcs))
	for i, f := range sym.Funcs {
		if s := subprogramAt(opt.Subprograms, f.Addr); s != nil && s.Artificial && !isLambda(f.Name) {
			noLines[i] = true
		}
	}
	model := opt.Lines && lt != nil && !opt.RowSites
	if opt.Blocks || model {
		specs = append(specs, p.blockSpecs(sym, lt, keepFunc, keepFile, noLines, opt)...)
	}
	modeled := make([]bool, len(sym.Funcs))
	if model {
		for _, fg := range p.Graphs {
			modeled[fg.Func] = true
		}
	}
	// The sites at rows (of the functions without a flow graph) come
	// before the line model, so that the table is whole while the model
	// runs; their lines are numbered after it (pendingLines), in their
	// rows' order.
	var pending pendingLines
	if opt.Lines && lt != nil {
		for i := range modeled {
			modeled[i] = modeled[i] || noLines[i]
		}
		specs = append(specs, p.lineSpecs(sym, lt, keepFunc, keepFile, opt.GoPrologue, modeled, &pending)...)
	}
	if opt.GoPrologue {
		// Functions compiled from Go source (not cgo's C, not assembly)
		// run with the goroutine in R14.
		for k := range specs {
			if f := specs[k].Func; f >= 0 && strings.HasSuffix(p.Funcs[f].File, ".go") {
				specs[k].Go = true
			}
		}
	}
	for _, a := range opt.Notify {
		specs = append(specs, SiteSpec{Addr: a, Func: -1, Notify: true})
	}
	for _, a := range opt.Resume {
		specs = append(specs, SiteSpec{Addr: a, Func: -1, Resume: true})
	}
	p.Table = NewTable(specs, 0)
	var blocksErr error
	if len(p.Graphs) > 0 {
		blocksErr = p.Table.SetBlocks(p.Graphs)
	}
	// The jump plan reads the table and the flow graphs, the line model
	// writes only its own: on a second CPU, the plan costs nothing of a
	// large program's start (SQLite: a fifth of it).
	var jumps chan JumpPlan
	if opt.Jumps && blocksErr == nil {
		jumps = make(chan JumpPlan, 1)
		go func() { jumps <- p.PlanJumps(sym, opt) }()
	}
	if model {
		p.model = &lineModel{index: map[LineRef]int32{}}
		for gi, fg := range p.Graphs {
			if fi := int(fg.Func); !noLines[fi] {
				p.modelLines(p.model, sym, lt, fi, gi, subprogramAt(opt.Subprograms, sym.Funcs[fi].Addr), keepFile, opt.Source)
			}
		}
	}
	p.Table.setLines(pending.resolve(p), len(p.Lines))
	if blocksErr != nil {
		// blockSpecs numbers densely; a failure here is ours, and the
		// run goes on counting lines and functions.
		for _, g := range p.Graphs {
			p.BlockErrors = append(p.BlockErrors, BlockError{Func: int(g.Func), Err: blocksErr})
		}
		p.Graphs = nil
	}
	if jumps != nil {
		p.Jumps = <-jumps
	} else if opt.Jumps {
		p.Jumps = p.PlanJumps(sym, opt)
	}
	return p
}

// lineSpecs sweeps the rows (sorted by address) against the functions (sorted by
// address), decoding each function that has rows once.
func (p *Plan) lineSpecs(sym *symtab.File, lt *lineinfo.Table, keepFunc []bool, keepFile func(string) bool, goPrologue bool, modeled []bool, pending *pendingLines) []SiteSpec {
	fileOK := make([]int8, len(lt.Files)) // 0 unknown, 1 keep, -1 drop
	var specs []SiteSpec
	rows := lt.Rows
	r := 0
	drop := func(row lineinfo.Row, reason string) {
		p.Dropped = append(p.Dropped, DroppedRow{Addr: row.Addr, File: lt.Files[row.File], Line: int(row.Line), Reason: reason})
	}
	keepRow := func(row lineinfo.Row) bool {
		if int(row.File) >= len(fileOK) {
			return false
		}
		if fileOK[row.File] == 0 {
			fileOK[row.File] = -1
			if keepFile(lt.Files[row.File]) {
				fileOK[row.File] = 1
			}
		}
		return fileOK[row.File] == 1
	}
	for fi, f := range sym.Funcs {
		end := f.Addr + f.Size
		for r < len(rows) && rows[r].Addr < f.Addr {
			if keepRow(rows[r]) {
				drop(rows[r], ReasonOutsideFunc)
			}
			r++
		}
		first := r
		for r < len(rows) && rows[r].Addr < end {
			r++
		}
		if first == r || !keepFunc[fi] || modeled[fi] {
			continue
		}
		var mine []lineinfo.Row
		for _, row := range rows[first:r] {
			if keepRow(row) {
				mine = append(mine, row)
			}
		}
		if len(mine) == 0 {
			continue
		}
		code, ok := sym.Code(f.Addr, int(f.Size))
		if !ok {
			for _, row := range mine {
				drop(row, ReasonNotExecutable)
			}
			continue
		}
		entry, tail := p.entryOf(sym, fi, goPrologue)
		starts, derr := symtab.InstructionStarts(code, f.Addr)
		limit := end
		if derr != nil {
			// Nothing from the first undecodable instruction on can be
			// checked, even when that is the function's first byte.
			limit = f.Addr
			if len(starts) > 0 {
				limit = starts[len(starts)-1] + 1
			}
		}
		for k := 0; k < len(mine); {
			row := mine[k]
			j := k
			for j < len(mine) && mine[j].Addr == row.Addr {
				j++
			}
			if row.Addr < entry || row.Addr >= tail {
				for _, x := range mine[k:j] {
					drop(x, ReasonGoPrologue)
				}
				k = j
				continue
			}
			if row.Addr >= limit && derr != nil {
				for _, x := range mine[k:j] {
					drop(x, ReasonUndecodable)
				}
				k = j
				continue
			}
			n := sort.Search(len(starts), func(q int) bool { return starts[q] >= row.Addr })
			if n == len(starts) || starts[n] != row.Addr {
				for _, x := range mine[k:j] {
					drop(x, ReasonNotInsnStart)
				}
				k = j
				continue
			}
			s := SiteSpec{Addr: row.Addr, Kind: KindLine, Func: int32(fi), Entry: row.Addr == entry}
			for _, x := range mine[k:j] {
				// Lines are keyed by path, not file index: a line table may
				// name one file under several indexes (DWARF 5 repeats the
				// primary file as entry 0).
				s.Lines = append(s.Lines, pending.add(LineRef{File: lt.Files[x.File], Line: int(x.Line)}, fi))
			}
			markRep(&s, code[row.Addr-f.Addr:])
			specs = append(specs, s)
			k = j
		}
	}
	for ; r < len(rows); r++ {
		if keepRow(rows[r]) {
			drop(rows[r], ReasonOutsideFunc)
		}
	}
	return specs
}

// entryOf returns the address that runs once per call of function i: its
// entry, or with goPrologue the instruction after Go's stack check. tail is
// where the stack check's out-of-line morestack call starts (Go puts it at the
// end of the function), or the function's end.
func (p *Plan) entryOf(sym *symtab.File, i int, goPrologue bool) (entry, tail uint64) {
	f := sym.Funcs[i]
	end := f.Addr + f.Size
	if !goPrologue {
		return f.Addr, end
	}
	n := goPrologueMax
	if int(f.Size) < n {
		n = int(f.Size)
	}
	code, ok := sym.Code(f.Addr, n)
	if !ok {
		return f.Addr, end
	}
	if off, target, ok := goPrologueEnd(code, f.Addr); ok {
		if target <= f.Addr+uint64(off) || target > end {
			target = end
		}
		return f.Addr + uint64(off), target
	}
	return f.Addr, end
}

// goPrologueMax bounds the bytes goPrologueEnd needs: the longest prologue
// is an assembly function's g load in a PIE (11 bytes) followed by the
// huge-frame check (26 bytes with rel32 jumps).
const goPrologueMax = 40

// goPrologueEnd recognises the stack check the Go compiler (and the assembler,
// for assembly functions without NOSPLIT) puts at the start of every function
// that may grow its stack, in each form Go 1.26 emits for amd64
// (cmd/internal/obj/x86/obj6.go, stacksplit and loadG). R14 holds the
// current g; 16(R14) is g.stackguard0, 24(R14) g.stackguard1 (the guard of
// //go:systemstack functions). R12 is the scratch register.
//
//	CMPQ SP, 16(R14)                          frame <= StackSmall (128 bytes)
//	LEAQ -(frame-128)(SP), R12                frame <= StackBig (4096 bytes)
//	CMPQ R12, 16(R14)
//	MOVQ SP, R12                              larger frames: SP-frame may wrap
//	SUBQ $(frame-128), R12
//	JCS  morestack-call                       (the same target as the JLS)
//	CMPQ R12, 16(R14)
//	JLS  morestack-call                       all forms (JBE in Intel terms)
//
// ABI0 functions (assembly) do not receive g in R14 and load it first from
// thread-local storage (MOVQ FS:-8, R14; in a PIE MOVQ $-8, R14; MOVQ
// FS:(R14), R14). The morestack call jumps back to the function's first
// instruction, g load included, so all of it is re-executed when the stack
// grows. Go 1.26 no longer compares against StackPreempt in the prologue
// (older releases did for huge frames); those forms are not recognised and
// leave the entry at the function's address.
//
// It returns the offset of the instruction after the JLS and the JLS's target.
func goPrologueEnd(code []byte, addr uint64) (int, uint64, bool) {
	d := prologueDecoder{code: code}
	inst := d.next()
	if isGLoad(inst) {
		if m, ok := inst.Args[1].(x86asm.Mem); !ok || m.Segment != x86asm.FS {
			// MOVQ $-8, R14 (or the offset from the GOT): FS:(R14) must follow.
			inst = d.next()
			m, ok := inst.Args[1].(x86asm.Mem)
			if !isGLoad(inst) || !ok || m.Segment != x86asm.FS || m.Base != x86asm.R14 || m.Disp != 0 || m.Index != 0 {
				return 0, 0, false
			}
		}
		inst = d.next()
	}
	var scratch x86asm.Reg = x86asm.RSP // the register compared with the guard
	var carry uint64                    // the huge form's JCS target
	switch {
	case inst.Op == x86asm.LEA && isReg(inst.Args[0], x86asm.R12):
		m, ok := inst.Args[1].(x86asm.Mem)
		if !ok || m.Base != x86asm.RSP || m.Index != 0 || m.Disp > 0 {
			return 0, 0, false
		}
		scratch = x86asm.R12
		inst = d.next()
	case inst.Op == x86asm.MOV && isReg(inst.Args[0], x86asm.R12) && isReg(inst.Args[1], x86asm.RSP):
		inst = d.next()
		if _, ok := inst.Args[1].(x86asm.Imm); inst.Op != x86asm.SUB || !isReg(inst.Args[0], x86asm.R12) || !ok {
			return 0, 0, false
		}
		inst = d.next()
		if inst.Op != x86asm.JB {
			return 0, 0, false
		}
		carry = d.target(inst, addr)
		scratch = x86asm.R12
		inst = d.next()
	}
	if inst.Op != x86asm.CMP || !isReg(inst.Args[0], scratch) {
		return 0, 0, false
	}
	if m, ok := inst.Args[1].(x86asm.Mem); !ok || m.Segment != 0 || m.Base != x86asm.R14 || m.Index != 0 || (m.Disp != 16 && m.Disp != 24) {
		return 0, 0, false
	}
	inst = d.next()
	if inst.Op != x86asm.JBE {
		return 0, 0, false
	}
	target := d.target(inst, addr)
	if d.err || (carry != 0 && carry != target) {
		return 0, 0, false
	}
	return d.off, target, true
}

// A prologueDecoder decodes instructions one after the other with a sticky
// failure: once one does not decode, the rest read as the zero Inst (whose Op
// matches nothing goPrologueEnd looks for) and err stays set.
type prologueDecoder struct {
	code []byte
	off  int
	err  bool
}

func (d *prologueDecoder) next() x86asm.Inst {
	if d.err {
		return x86asm.Inst{}
	}
	inst, err := x86asm.Decode(d.code[d.off:], 64)
	if err != nil || inst.Len == 0 {
		d.err = true
		return x86asm.Inst{}
	}
	d.off += inst.Len
	return inst
}

// target is the destination of the relative jump inst, just decoded.
func (d *prologueDecoder) target(inst x86asm.Inst, addr uint64) uint64 {
	rel, ok := inst.Args[0].(x86asm.Rel)
	if !ok {
		d.err = true
		return 0
	}
	return uint64(int64(addr) + int64(d.off) + int64(rel))
}

// isGLoad reports whether inst is a 64-bit MOV into R14 from memory or an
// immediate: the first half of loadG's TLS access.
func isGLoad(inst x86asm.Inst) bool {
	if inst.Op != x86asm.MOV || !isReg(inst.Args[0], x86asm.R14) {
		return false
	}
	switch inst.Args[1].(type) {
	case x86asm.Mem:
		return true
	case x86asm.Imm:
		return true
	}
	return false
}

func isReg(a x86asm.Arg, r x86asm.Reg) bool {
	got, ok := a.(x86asm.Reg)
	return ok && got == r
}

// markRep flags a rep-prefixed string instruction (Intel SDM vol. 2, REP/REPE/
// REPNE: with TF set the processor traps after each iteration, so the thread
// stays at the same address for several single-steps) and records its length.
func markRep(s *SiteSpec, code []byte) {
	rep := false
	k := 0
	for ; k < len(code) && k < 15; k++ {
		b := code[k]
		switch {
		case b == 0xF2 || b == 0xF3:
			rep = true
			continue
		case b == 0x66 || b == 0x67 || b == 0x2E || b == 0x36 || b == 0x3E || b == 0x26 || b == 0x64 || b == 0x65 || b == 0xF0:
			continue
		case b >= 0x40 && b <= 0x4F:
			continue
		}
		break
	}
	if !rep || k >= len(code) {
		return
	}
	switch op := code[k]; {
	case op >= 0xA4 && op <= 0xA7, op >= 0xAA && op <= 0xAF, op >= 0x6C && op <= 0x6F:
	default:
		return
	}
	inst, err := x86asm.Decode(code, 64)
	if err != nil {
		return
	}
	s.Rep = true
	s.Len = uint8(inst.Len)
}

// lambdaBody matches the Itanium C++ ABI mangling of a lambda's function
// call operator or static invoker: its closure type is
// "Ul <parameter types> E [<number>] _" (5.1.8, closure types), and the
// member "cl" (operator()) or "_FUN".
var lambdaBody = lazyRE(`Ul\w*?E\d*_(cl|4_FUN)`)

// isLambda reports whether the symbol name is a C++ lambda's body.
func isLambda(name string) bool { return lambdaBody.MatchString(name) }
