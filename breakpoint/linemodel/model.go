package linemodel

import (
	"path/filepath"
	"slices"
	"sort"

	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/lineinfo"
	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
)

// Line counts the gcov way (package linecount): a function whose flow
// graph cfg recovers has no line sites; its blocks are planted (SplitCalls:
// a call ends its block, so a return is an arc) and each block carries the
// lines of its statements. A line's count is then derived from block and
// arc counts (Model.Counts), which makes it independent of which rows
// happen to be planted, and gives the count gcov gives where the machine
// code has rows GCC's statements do not:
//
//   - The first row at a function's entry (the opening brace's line, where
//     the prologue is) belongs to the declarator line (DW_AT_decl_line),
//     where gcov puts the entry count.
//   - The closing brace's rows, when they are only the epilogue (leave,
//     pop, ret), are no statement of GCC's unless the function is void
//     and has no return statement: gcov shows '-' there.
//   - A block that is only a backward jmp on the line of the block it
//     jumps to (the jmp closing a `for (;;)` or `while (1)` loop) is no
//     block of GCC's: its arcs go straight to its target.
//   - A block that starts between rows (after a call returns) carries the
//     line of the row it starts in, unless it is only the jump of a
//     computed goto: GCC -O0 funnels every goto *p of a function into one
//     such block, which has no location of GCC's.
//   - A goto label (DW_TAG_label) is a statement at its address, as
//     GCC's label statement is.
//   - A case label, which has no row, is read from the source above the
//     case's first statement (labels.go).
//   - A break, continue or goto whose jmp shares the row of the statement
//     before it is a line of that block (jumps.go).
//   - The jump back to the top of a `for (;;)` or `while (1)` loop is a
//     block of GCC's with a line of its own, which every arc back to the
//     head runs through (loops.go).
//   - The jump past an if's else branches has no location of GCC's
//     unless the then branch declares variables; a jmp into a jump
//     statement's own block takes that statement's row; a branch whose
//     jmp skips that statement's nop falls into it (jumps.go).
//   - The jumps leaving a scope that takes a local's address run through
//     one copy of its clobbers per destination, located at the first of
//     them (finally.go).
//   - Arrivals at a block along none of its arcs count as entries only at
//     the function's entry and at landing pads (calls, exceptions); a
//     longjmp landing after its setjmp call is an abnormal edge gcov does
//     not count.

// A LineRef is one source line: a file's path and its 1-based line.
type LineRef struct {
	File string
	Line int
}

// A Graph is one function counted by blocks, as the model reads it: its
// flow graph, the part of it that runs once per call, and where its blocks
// and edges are in the count slices Counts takes.
type Graph struct {
	Func  int // index into Inputs.Sym.Funcs
	Graph *cfg.Graph
	// Entry and Tail bound the blocks that are statements of the
	// function: Go's stack check before Entry and from Tail is none.
	Entry, Tail uint64
	// FirstBlock and FirstEdge index its first block and first edge in
	// the count slices.
	FirstBlock, FirstEdge int
}

// Inputs is what Build reads: the program's functions and code, its line
// rows and subprograms, the flow graphs of the functions counted by
// blocks, which files the report keeps, and the source text.
type Inputs struct {
	Sym  *symtab.File
	Rows *lineinfo.Table
	// Subprograms are the functions .debug_info describes, sorted by
	// LowPC (lineinfo.Subprograms); nil is allowed.
	Subprograms []lineinfo.Subprogram
	// CallName names the function a direct call to an address reaches
	// (a PLT stub's target): GCC ends no block after a call to some C
	// library builtins. nil is allowed.
	CallName func(addr uint64) string
	Graphs   []Graph
	// KeepFile reports whether the report shows the lines of a file.
	KeepFile func(path string) bool
	// Source reads a source file's lines (nil, or ok false, when it
	// cannot): case labels, codeless statements and jumps are read there.
	Source func(path string) (lines []string, ok bool)
}

// A Model is gcc's line model of the functions counted by blocks: every
// line their blocks name (in any file), the blocks of GCC's the machine
// code does not have, and which lines the report shows (Lines).
type Model struct {
	// Lines are the lines the report shows, in order of first sight;
	// LineFuncs names, per line, the function (index into
	// Inputs.Sym.Funcs) it was first found in. The counts Counts returns
	// for them are its first len(Lines).
	Lines     []LineRef
	LineFuncs []int32

	keys []LineRef
	// index holds the keys of the lines byFile cannot (a broken line
	// table's, at or past maxDenseLine); keyOf reads both.
	index  map[LineRef]int32
	report []int32 // per key: index into Lines, -1 when its file is not kept
	funcs  []modelFunc
	graphs []Graph
	// keepFile is Inputs.KeepFile, read while the model is built.
	keepFile func(string) bool
	pp       map[string]*ppFile // per source file, read on first use
	// funcNames are the program's function symbols, which a call in a
	// compiled-out branch names (ppFile).
	funcNames map[string]bool
	exits     exitsMemo // the last function's exitsOf (finally.go)
	// caseMacs are each file's macros that write a case label
	// (caseMacros), read once.
	caseMacs map[string]map[string]bool
	// callName is Inputs.CallName.
	callName func(uint64) string
	// noReturn are the entries of the functions DWARF declares never to
	// return.
	noReturn map[uint64]bool
	// retMacros are, per source file, its macros that expand to a return
	// statement (epilogue.go), read on first use.
	retMacros map[string]map[string]bool
	// texts index each source file's lines for the rules (index.go),
	// keyed by the first line of the slice Inputs.Source returned.
	texts map[*string]*srcText
	// byFile holds the keys per file as a slice by line (keyOf), and
	// lastFile the last one asked: a key is asked for every row of every
	// block, and hashing the file's path each time was a tenth of the
	// model's time.
	byFile   map[string]*fileKeys
	lastFile *fileKeys
	// defs are each source file's object-like macros (caseentries.go),
	// read on first use.
	defs map[string]map[string]string
}

// A modelFunc is one function counted by blocks: its graph (index into
// Model.graphs) and, per block, its lines with the address where each
// first appears.
type modelFunc struct {
	graph  int
	blocks [][]lineAt
	skip   []bool // per block: no block of GCC's (a loop-closing jmp)
	// latches are blocks of GCC's with no code of their own: the jumps
	// back to the top of loops with no condition (loops.go).
	latches []latch
	// finallies are GCC's copies of a scope's clobbers that its exits
	// to one destination run through (finally.go).
	finallies []finally
	// labels are the blocks of GCC's goto labels (gotolabels.go).
	labels []labelBlock
	// cases are the empty cases of its switches (emptycases.go).
	cases []caseGroup
	// caseHead marks the blocks addCaseLabels put a case label before.
	caseHead map[int]bool
	// folded marks the lone jmps addCaseLabels made part of a label's
	// block (dispatchPast): skipped as the jmps closing loops are.
	folded map[int]bool
	// preds are the arcs into each block (predsOf), made on first use.
	preds [][]int32
}

// A fnRow is a statement row of one function as the model reads it: its
// line possibly moved (the entry's to the declarator), or dropped (an
// epilogue that is no statement of GCC's).
type fnRow struct {
	addr uint64
	ref  LineRef
	drop bool
}

type lineAt struct {
	line int32
	addr uint64
}

// Build models the lines of every function of in.Graphs, but those gcov
// shows none of (NoLines).
func Build(in Inputs) *Model {
	m := &Model{graphs: in.Graphs, keepFile: in.KeepFile, callName: in.CallName}
	for _, sp := range in.Subprograms {
		if sp.NoReturn {
			if m.noReturn == nil {
				m.noReturn = make(map[uint64]bool)
			}
			m.noReturn[sp.LowPC] = true
		}
	}
	for gi, fg := range in.Graphs {
		f := in.Sym.Funcs[fg.Func]
		sub := lineinfo.SubprogramAt(in.Subprograms, f.Addr)
		if !NoLines(f.Name, sub) {
			m.modelLines(in.Sym, in.Rows, fg.Func, gi, sub, in.Source)
		}
	}
	// The indexes serve the rules only: the run that follows needs not
	// hold them (an amalgamation's are tens of megabytes).
	m.texts, m.byFile, m.lastFile = nil, nil, nil
	return m
}

// NoLines reports whether gcov shows no lines for the function name,
// whose DWARF subprogram is sub (nil when unknown): a function the
// compiler made up (an implicit C++ constructor or destructor) has no
// lines of the user's. GCC marks a lambda's body artificial too, but gcov
// counts it (GCC's coverage notes exempt lambdas).
func NoLines(name string, sub *lineinfo.Subprogram) bool {
	return sub != nil && sub.Artificial && !isLambda(name)
}

// lambdaBody matches the Itanium C++ ABI mangling of a lambda's function
// call operator or static invoker: its closure type is
// "Ul <parameter types> E [<number>] _" (5.1.8, closure types), and the
// member "cl" (operator()) or "_FUN".
var lambdaBody = lazyRE(`Ul\w*?E\d*_(cl|4_FUN)`)

// isLambda reports whether the symbol name is a C++ lambda's body.
func isLambda(name string) bool { return lambdaBody.MatchString(name) }

// lineKey returns the model's id of a line, adding it (and, when its file
// is kept, an entry of Lines) on first sight as a line of function fi.
func (m *Model) lineKey(ref LineRef, fi int) int32 {
	if k, ok := m.keyOf(ref); ok {
		return k
	}
	k := int32(len(m.keys))
	m.keys = append(m.keys, ref)
	if denseLine(ref.Line) {
		m.fileKeysOf(ref.File).note(ref.Line, k)
	} else {
		if m.index == nil {
			m.index = make(map[LineRef]int32)
		}
		m.index[ref] = k
	}
	r := int32(-1)
	if m.keepFile(ref.File) {
		r = int32(len(m.Lines))
		m.Lines = append(m.Lines, ref)
		m.LineFuncs = append(m.LineFuncs, int32(fi))
	}
	m.report = append(m.report, r)
	return k
}

// modelLines gives the function of graph gi (function fi) its block
// lines. sub is its DWARF subprogram, nil when unknown.
func (m *Model) modelLines(sym *symtab.File, lt *lineinfo.Table, fi, gi int, sub *lineinfo.Subprogram, source func(string) ([]string, bool)) {
	fg := m.graphs[gi]
	g := fg.Graph
	f := sym.Funcs[fi]
	rs, code, closing, noStmt := m.funcRows(sym, lt, f, sub, source)
	if m.funcNames == nil {
		m.funcNames = make(map[string]bool, len(sym.Funcs))
		for _, sf := range sym.Funcs {
			m.funcNames[sf.Name] = true
		}
	}
	if sub != nil && lineinfo.IsPlainC(sub.Lang) {
		liftOperandTests(rs, code, f.Addr, g, m.callName)
	}
	mf := modelFunc{graph: gi, blocks: make([][]lineAt, len(g.Blocks)), skip: make([]bool, len(g.Blocks))}
	for b, bl := range g.Blocks {
		if bl.Start < fg.Entry || bl.Start >= fg.Tail {
			continue // Go's stack check: no statement of the function
		}
		// The row the block starts in, then the rows inside it.
		k := sort.Search(len(rs), func(k int) bool { return rs[k].addr > bl.Start }) - 1
		for k >= 0 && k > 0 && rs[k-1].addr == rs[k].addr {
			k--
		}
		var ls []lineAt
		add := func(r fnRow) {
			if r.drop {
				return
			}
			id := m.lineKey(r.ref, fi)
			for _, x := range ls {
				if x.line == id {
					return
				}
			}
			ls = append(ls, lineAt{line: id, addr: max(r.addr, bl.Start)})
		}
		// The return path of a closing-brace row that also holds a
		// landing pad (C++ -O0 puts the cleanup before the epilogue) has
		// no statement of GCC's either.
		skipEffect := k >= 0 && noStmt && rs[k].ref == closing && bl.Start-f.Addr < uint64(len(code)) &&
			onlyEpilogue(code[bl.Start-f.Addr:], bl.Start, nil)
		if k >= 0 && (callTail(g, b, rs, code, f.Addr) || factoredGoto(g, b)) {
			skipEffect = true
		}
		if k >= 0 && rs[k].addr < bl.Start && !skipEffect {
			// Every row at that address, not just the last.
			for j := k; j < len(rs) && rs[j].addr == rs[k].addr; j++ {
				add(rs[j])
			}
		}
		for j := max(k, 0); j < len(rs) && rs[j].addr < bl.End; j++ {
			if rs[j].addr >= bl.Start {
				add(rs[j])
			}
		}
		mf.blocks[b] = ls
	}
	if sub != nil && lineinfo.IsC(sub.Lang) && !lineinfo.IsPlainC(sub.Lang) {
		m.addVirtualCallCopies(g, &mf, code, f.Addr)
	}
	var mem inMemory
	if sub != nil {
		mem = localsInMemory(sub.Locals, code)
	}
	if source != nil {
		m.addCaseLabels(g, &mf, rs, lt, fi, source)
		if sub != nil && lineinfo.IsC(sub.Lang) {
			if sub.GCCO0 {
				m.addEmptyCases(g, &mf, rs, lt, fi, source)
				m.addClobberedEnds(g, &mf, rs, mem, fi, source)
			}
			m.addMergedJumps(g, &mf, rs, code, f.Addr, m.noReturnCalls(g, code, f.Addr), fi, source)
			m.addLatches(g, &mf, rs, fi, source)
			addFinallies(m, g, &mf, rs, mem, source)
		}
	}
	// A loop-closing jmp is judged against its target's lines, which a
	// later block may have: look again now that all are known.
	for b := range g.Blocks {
		mf.skip[b] = mf.folded[b] || closesLoop(g, b, mf.blocks[b], &mf)
	}
	dropLoopTails(m, g, &mf)
	if source != nil && sub != nil && lineinfo.IsC(sub.Lang) {
		dropJoinJumps(m, g, &mf, source)
		addLabelBlocks(m, g, &mf, sub.Labels, rs, codeNops(code, f.Addr), source)
		m.addArmReturns(g, &mf, rs, source)
		m.addCodelessReturns(g, &mf, source)
		if !lineinfo.IsPlainC(sub.Lang) {
			m.addBraceGotos(g, &mf, source)
		}
		m.addFoldedJumps(g, &mf, rs, mem, fi, source)
		if len(rs) > 0 && rs[0].addr == f.Addr && sub.DeclLine > 0 {
			if decl, ok := m.keyOf(rs[0].ref); ok {
				declOnLoopHead(m, g, &mf, fg.Entry, decl, source)
			}
		}
	}
	mf.preds = nil // read while the rules run only
	m.funcs = append(m.funcs, mf)
}

// dropLoopTails takes the loop-closing jmp off the end of a longer block:
// the same jmp at the end of a block the loop's last statement falls into
// is no statement either, its row naming the loop head's line, unless the
// block also runs a `for` header's increment (a line above the head),
// which GCC's latch carries.
func dropLoopTails(m *Model, g *cfg.Graph, mf *modelFunc) {
	for b := range g.Blocks {
		ls := mf.blocks[b]
		n := len(ls)
		if n < 2 || mf.skip[b] || ls[n-1].addr != g.Blocks[b].Last || !closesLoopTail(g, b, ls[n-1], mf) {
			continue
		}
		head := m.keys[ls[n-1].line]
		above := false
		for _, x := range ls[:n-1] {
			if k := m.keys[x.line]; k.File == head.File && k.Line < head.Line {
				above = true
			}
		}
		if !above {
			mf.blocks[b] = ls[:n-1]
		}
	}
}

// funcRows returns the rows of function f as the line model reads them:
// in C, the entry row on the declarator line, goto labels as rows of their
// own, codeless statements (va_end) added from the source, and the
// epilogue's closing-brace rows marked (closing, noStmt: see
// markEpilogue); with the function's code.
func (m *Model) funcRows(sym *symtab.File, lt *lineinfo.Table, f symtab.Func, sub *lineinfo.Subprogram, source func(string) ([]string, bool)) (rs []fnRow, code []byte, closing LineRef, noStmt bool) {
	rows := lt.RowsIn(f.Addr, f.Addr+f.Size)
	rs = make([]fnRow, len(rows))
	for k, r := range rows {
		rs[k] = fnRow{addr: r.Addr, ref: LineRef{File: lt.Files[r.File], Line: int(r.Line)}}
	}
	code, _ = sym.Code(f.Addr, int(f.Size))
	if sub != nil && lineinfo.IsC(sub.Lang) {
		// The first row at the entry is the opening brace (rows at one
		// address are sorted by line); others there (-O2) are statements.
		if sub.DeclLine > 0 && len(rs) > 0 && rs[0].addr == f.Addr {
			rs[0].ref.Line = sub.DeclLine
			// A relative DW_AT_decl_file (a DWARF 5 unit compiled from a
			// relative path) names the row's file; lineinfo made that one
			// absolute.
			if filepath.IsAbs(sub.DeclFile) {
				rs[0].ref.File = sub.DeclFile
			}
		}
		// Labels are statements of their own, before the statement
		// row at their address.
		for _, lb := range sub.Labels {
			k := sort.Search(len(rs), func(k int) bool { return rs[k].addr >= lb.Addr })
			rs = slices.Insert(rs, k, fnRow{addr: lb.Addr, ref: LineRef{File: lb.File, Line: lb.Line}})
		}
		if source != nil {
			rs = m.addCodeless(rs, source, sub.GCCO0, !lineinfo.IsPlainC(sub.Lang))
		}
		var src []string
		if source != nil && len(rs) > 0 {
			src, _ = source(rs[0].ref.File)
		}
		if src != nil {
			markElseJumps(rs, code, f.Addr, src)
		}
		var macros map[string]bool
		if src != nil {
			macros = m.returnMacros(rs[0].ref.File, src)
		}
		closing, noStmt = markEpilogue(rs, code, f.Addr, sub, src, macros)
	}
	return rs, code, closing, noStmt
}

// closesLoopTail reports whether the last line x of block b, first seen
// at the block's last instruction, is a backward jmp to a block whose first
// line is x's: a loop's closing jmp at the end of its last statement's
// block.
func closesLoopTail(g *cfg.Graph, b int, x lineAt, mf *modelFunc) bool {
	bl := &g.Blocks[b]
	if bl.Term != cfg.TermJump {
		return false
	}
	succ := g.Succs(b)
	if len(succ) != 1 || succ[0].To < 0 || succ[0].Target >= bl.Start {
		return false
	}
	l, ok := headLine(mf, succ[0].To)
	return ok && l == x.line
}

// callTail reports whether block b is the code after a call that only
// stores its result (and pops pushed arguments) before the next row,
// which then starts inside the block: that code belongs to the call
// statement (GCC's `x = f (...)`), not to a statement after it, so the
// block does not carry the call's line again. A block that is only that
// tail (a jump target follows it) is the rest of the call's block in
// GCC's graph, where a call has a fake arc to the exit but ends no block:
// it keeps the line, so that leaving it enters no line. code is the
// function's, from base.
func callTail(g *cfg.Graph, b int, rs []fnRow, code []byte, base uint64) bool {
	bl := &g.Blocks[b]
	if b == 0 || g.Blocks[b-1].Term != cfg.TermCall || g.Blocks[b-1].End != bl.Start {
		return false
	}
	n := sort.Search(len(rs), func(j int) bool { return rs[j].addr > bl.Start })
	if n == len(rs) || rs[n].addr >= bl.End {
		return false
	}
	end := rs[n].addr
	return bl.Start >= base && bl.Start-base < uint64(len(code)) && end-base <= uint64(len(code)) && onlyMoves(code[bl.Start-base:end-base])
}

// onlyMoves reports whether code only moves data (a call's result into
// its variable) and releases pushed arguments: no arithmetic, no branch.
func onlyMoves(code []byte) bool {
	for off := 0; off < len(code); {
		inst, err := symtab.DecodeInst(code[off:])
		if err != nil || inst.Len == 0 {
			return false
		}
		switch inst.Op {
		case x86asm.MOV, x86asm.MOVQ, x86asm.MOVD, x86asm.MOVSD, x86asm.MOVSS, x86asm.NOP:
		case x86asm.ADD, x86asm.SUB:
			if inst.Args[0] != x86asm.RSP {
				return false
			}
		default:
			return false
		}
		off += inst.Len
	}
	return true
}

// closesLoop reports whether block b is only a jmp backwards whose line
// is the first line of the block it jumps to: the jmp GCC emits to close
// a loop, which is an edge in GCC's own graph, not a block.
func closesLoop(g *cfg.Graph, b int, ls []lineAt, mf *modelFunc) bool {
	bl := &g.Blocks[b]
	if bl.Term != cfg.TermJump || bl.Insts != 1 || len(ls) != 1 {
		return false
	}
	succ := g.Succs(b)
	if len(succ) != 1 || succ[0].To < 0 || succ[0].Target >= bl.Start {
		return false
	}
	l, ok := headLine(mf, succ[0].To)
	return ok && l == ls[0].line
}

// ListedLine returns the line block b of graph gi (index into
// Inputs.Graphs) is listed under in the line model, as gcov files the
// block's calls and branches: the last line of its statements. ok is false
// when the block has none or the function's lines were not modelled (m
// may be nil: none were).
func (m *Model) ListedLine(gi, b int) (LineRef, bool) {
	if m == nil {
		return LineRef{}, false
	}
	for _, mf := range m.funcs {
		if mf.graph != gi {
			continue
		}
		if b < 0 || b >= len(mf.blocks) || mf.skip[b] || len(mf.blocks[b]) == 0 {
			return LineRef{}, false
		}
		ls := make([]int32, len(mf.blocks[b]))
		for k, x := range mf.blocks[b] {
			ls[k] = x.line
		}
		listLast(m.keys, ls)
		return m.keys[ls[len(ls)-1]], true
	}
	return LineRef{}, false
}

// listLast moves the line a block is listed under to the end of its lines
// (model keys), as linecount expects. gcov sorts the lines of each of a
// block's location groups (a run of lines in one file) and lists the
// block under the last line of the last group: the highest line of the
// last file, not the last line the code reached (a call whose argument on
// the next line GCC evaluates first is listed under that line).
func listLast(keys []LineRef, ls []int32) {
	n := len(ls)
	if n < 2 {
		return
	}
	file := keys[ls[n-1]].File
	top := n - 1
	for k := n - 2; k >= 0 && keys[ls[k]].File == file; k-- {
		if keys[ls[k]].Line > keys[ls[top]].Line {
			top = k
		}
	}
	l := ls[top]
	copy(ls[top:], ls[top+1:])
	ls[n-1] = l
}

// funcSource returns the file of a function's first row (rs) and its
// lines, which the line model's source-reading passes read: false when the
// function has no rows or its source cannot be read.
func funcSource(rs []fnRow, source func(string) ([]string, bool)) (string, []string, bool) {
	if len(rs) == 0 {
		return "", nil, false
	}
	file := rs[0].ref.File
	src, ok := source(file)
	return file, src, ok
}

// rowSpan returns the lines a function's rows in file cover (lo to hi,
// from the first row's line when none is in file) and, per line, the
// lowest address of its rows.
func rowSpan(rs []fnRow, file string) (lo, hi int, firstAt map[int]uint64) {
	firstAt = map[int]uint64{}
	lo, hi = rs[0].ref.Line, rs[0].ref.Line
	for _, r := range rs {
		if r.ref.File != file {
			continue
		}
		lo, hi = min(lo, r.ref.Line), max(hi, r.ref.Line)
		if a, ok := firstAt[r.ref.Line]; !ok || r.addr < a {
			firstAt[r.ref.Line] = r.addr
		}
	}
	return lo, hi, firstAt
}

// factoredGoto reports whether block b of g is only the indirect jump of a
// computed goto (cfg.Table.Computed): GCC -O0 factors every goto *p of a
// function into one such block, located nowhere.
func factoredGoto(g *cfg.Graph, b int) bool {
	bl := &g.Blocks[b]
	if bl.Term != cfg.TermTable || bl.Insts != 1 {
		return false
	}
	for _, t := range g.Tables {
		if t.Jump == bl.Last {
			return t.Computed
		}
	}
	return false
}
