package breakpoint

import (
	"sort"
	"strings"
	"sync"

	"github.com/patchprof/patchprof/breakpoint/linemodel"
	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/lineinfo"
	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
)

// PlanOptions selects what to plant.
type PlanOptions struct {
	// Lines counts source lines: derived from block and arc counts (gcc's
	// line model, package linemodel) for every function whose flow cfg
	// recovers, from a site at every line-table row for the others.
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
	// Calls counts which function each indirect call enters (--calls):
	// under the in-process engine, the blocks ending in one are planted
	// and their calls tracked in the target (callplan.go).
	Calls bool
	// LazyEntries leaves the patch of an entry counted alone (planned
	// from the entry scan, entryscan.go) to be planned at the site's
	// first JumpLen, the first hit of its function, so that a program's
	// start does not grow with the functions it never runs. Not for an
	// eager attach, which patches every site at once, nor with Calls,
	// whose entries checks are planned together (listEntries).
	LazyEntries bool
	// LazyFuncs leaves the plan of a function with a flow graph (its
	// sites' jumps, derived blocks and counted arcs) to its first hit
	// too (lazyfuncs.go): the start plants all of its sites, and the
	// monitor puts back the bytes of the derived ones (Table.DerivedOf).
	// Not for an eager attach.
	LazyFuncs bool
	// LoadImage, if set and CFGImage is not, gives the options the file's
	// image (CFGImage, CalleeName, LandingPads) when a flow graph cannot
	// be built without it: under --funcs alone the in-process engine
	// checks an entry's patch against its function's graph, and only a
	// function with a jump table needs the image read.
	LoadImage func(*PlanOptions)

	// ModelAfter builds the line model on another goroutine, beside the
	// target's run: NewPlan returns once the table is whole, and the
	// model, Lines and LineFuncs are ready when Wait returns (the
	// methods that read them wait themselves). The run needs only the
	// table; the model says what the counts mean, at the report.
	ModelAfter bool

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

// A LineRef is one source line that has at least one planted row (or a
// statement of gcc's line model).
type LineRef = linemodel.LineRef

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
	// IndirectCalls maps each table-wide block that ends in an indirect
	// call or tail jump to how it reaches its callee (with
	// PlanOptions.Calls).
	IndirectCalls map[int32]IndirectCall

	lineIndex map[LineRef]int32 // index of each LineRef in Lines
	model     *linemodel.Model  // lines derived from blocks (planlines.go)
	// lineFinal maps the table's line numbers (Table.Lines, the indexes
	// of Counts.LineEntries: the rows' lines, numbered as NewPlan meets
	// them) to their indexes in Lines, which the line model numbers first.
	lineFinal []int32
	// modelDone, when the model is built beside the run
	// (PlanOptions.ModelAfter), is closed once it and Lines are whole.
	modelDone chan struct{}
	targets   *symtab.Targets // where the module's code may branch (PlanJumps)

	graphOnce sync.Once
	// callee reads which registers a direct call may change, for the
	// flow graphs' jump tables (calleeWrites).
	calleeOnce sync.Once
	callee     *cfg.CalleeRegs
	graphAt    []int32 // per function of Funcs, its index in Graphs or -1 (graphIndex)
	// entryGraphs has PlanJumps build the flow graph of every function
	// counted only at its entry, as it did before entryScan (a test's
	// reference).
	entryGraphs bool
	// entryScanned counts the entries planned by entryScan.
	entryScanned int
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
	keepFunc := p.describeFuncs(sym, lt, keepFile, opt)
	specs := p.funcSpecs(sym, keepFunc, opt)
	// A function the compiler made up (an implicit C++ constructor or
	// destructor) has no lines of the user's: gcov shows none.
	noLines := make([]bool, len(sym.Funcs))
	for i, f := range sym.Funcs {
		noLines[i] = linemodel.NoLines(f.Name, lineinfo.SubprogramAt(opt.Subprograms, f.Addr))
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
		// run with the goroutine in R14, and so do the wrappers the
		// compiler generates (goGenerated).
		for k := range specs {
			if f := specs[k].Func; f >= 0 && (strings.HasSuffix(p.Funcs[f].File, ".go") || goGenerated(p.Funcs[f])) {
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
	p.Table.sizeLines(len(pending.refs))
	var blocksErr error
	if len(p.Graphs) > 0 {
		blocksErr = p.Table.SetBlocks(p.Graphs)
	}
	// The jump plan reads the table and the flow graphs, the line model
	// writes only its own: on a second CPU, the plan costs nothing of a
	// large program's start (SQLite: a fifth of it).
	if opt.Calls && blocksErr == nil {
		p.IndirectCalls = p.indirectCallBlocks(sym)
	}
	var jumps chan JumpPlan
	if opt.Jumps && blocksErr == nil {
		jumps = make(chan JumpPlan, 1)
		go func() { jumps <- p.PlanJumps(sym, opt) }()
	}
	if model {
		graphs := p.modelGraphs()
		if opt.ModelAfter {
			p.modelDone = make(chan struct{})
			go func() {
				defer close(p.modelDone)
				p.buildModel(sym, lt, graphs, keepFile, opt)
				p.lineFinal = pending.resolve(p)
			}()
		} else {
			p.buildModel(sym, lt, graphs, keepFile, opt)
		}
	}
	if p.modelDone == nil {
		p.lineFinal = pending.resolve(p)
	}
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

// describeFuncs fills p.Funcs from the symbols and the line table and
// returns which functions the options keep.
func (p *Plan) describeFuncs(sym *symtab.File, lt *lineinfo.Table, keepFile func(string) bool, opt PlanOptions) []bool {
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
				if s := lineinfo.SubprogramAt(opt.Subprograms, f.Addr); s != nil && lineinfo.IsC(s.Lang) && s.DeclLine > 0 && s.DeclLine <= line {
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
	return keepFunc
}

// funcSpecs returns a site at the entry of every kept function, with
// opt.Funcs.
func (p *Plan) funcSpecs(sym *symtab.File, keepFunc []bool, opt PlanOptions) []SiteSpec {
	var specs []SiteSpec
	if opt.Funcs {
		specs = make([]SiteSpec, 0, len(sym.Funcs))
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
	return specs
}

// lineSpecs sweeps the rows (sorted by address) against the functions (sorted by
// address), decoding each function that has rows once.
func (p *Plan) lineSpecs(sym *symtab.File, lt *lineinfo.Table, keepFunc []bool, keepFile func(string) bool, goPrologue bool, modeled []bool, pending *pendingLines) []SiteSpec {
	fileOK := make([]int8, len(lt.Files)) // 0 unknown, 1 keep, -1 drop
	var specs []SiteSpec
	rows := lt.Rows
	r := 0
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
				p.drop(lt, rows[r], ReasonOutsideFunc)
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
		if len(mine) > 0 {
			specs = append(specs, p.rowSpecs(sym, lt, fi, mine, goPrologue, pending)...)
		}
	}
	for ; r < len(rows); r++ {
		if keepRow(rows[r]) {
			p.drop(lt, rows[r], ReasonOutsideFunc)
		}
	}
	return specs
}

// drop records a row of lt that is not planted, and why.
func (p *Plan) drop(lt *lineinfo.Table, row lineinfo.Row, reason string) {
	p.Dropped = append(p.Dropped, DroppedRow{Addr: row.Addr, File: lt.Files[row.File], Line: int(row.Line), Reason: reason})
}

// rowSpecs returns a site at each of the rows (mine, sorted by address)
// of function fi that starts an instruction, after the function's Go
// prologue, and records the others in p.Dropped.
func (p *Plan) rowSpecs(sym *symtab.File, lt *lineinfo.Table, fi int, mine []lineinfo.Row, goPrologue bool, pending *pendingLines) []SiteSpec {
	f := sym.Funcs[fi]
	code, ok := sym.Code(f.Addr, int(f.Size))
	if !ok {
		for _, row := range mine {
			p.drop(lt, row, ReasonNotExecutable)
		}
		return nil
	}
	entry, tail := p.entryOf(sym, fi, goPrologue)
	starts, derr := symtab.InstructionStarts(code, f.Addr)
	limit := f.Addr + f.Size
	if derr != nil {
		// Nothing from the first undecodable instruction on can be
		// checked, even when that is the function's first byte.
		limit = f.Addr
		if len(starts) > 0 {
			limit = starts[len(starts)-1] + 1
		}
	}
	var specs []SiteSpec
	for k := 0; k < len(mine); {
		row := mine[k]
		j := k
		for j < len(mine) && mine[j].Addr == row.Addr {
			j++
		}
		reason := ""
		if row.Addr < entry || row.Addr >= tail {
			reason = ReasonGoPrologue
		} else if row.Addr >= limit && derr != nil {
			reason = ReasonUndecodable
		} else if n := sort.Search(len(starts), func(q int) bool { return starts[q] >= row.Addr }); n == len(starts) || starts[n] != row.Addr {
			reason = ReasonNotInsnStart
		}
		if reason != "" {
			for _, x := range mine[k:j] {
				p.drop(lt, x, reason)
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

// goGenerated reports whether f, a function of a Go program, is code the
// Go compiler made rather than compiled from a file: a method wrapper
// (an interface call of a value method enters main.(*T).M, which calls
// main.T.M), an equality function. Its rows are the toolchain's
// "<autogenerated>", which the line table leaves without a file, so f has
// none; it has a Go package-qualified name, unlike C without debug
// information (_start, _cgo_ helpers) or an ABI0 assembly entry.
func goGenerated(f FuncInfo) bool {
	return f.File == "" && strings.Contains(f.Name, ".") && !strings.HasPrefix(f.Name, "_") && !strings.HasSuffix(f.Name, ".abi0")
}
