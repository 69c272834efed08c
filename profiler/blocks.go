package profiler

import (
	"fmt"
	"golang.org/x/arch/x86/x86asm"
	"os"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/internal/mapfile"
	"github.com/patchprof/patchprof/profile"
	"github.com/patchprof/patchprof/symtab"
)

// addCFG sets the plan options for block counting in the module sym: jump
// tables are read from the file's loadable segments, calls named from its
// symbols and PLT. A file that cannot be read for that gets no block sites
// (every function would be refused anyway) and a note through the plan.
func addCFG(popt *breakpoint.PlanOptions, sym *symtab.File) {
	popt.Blocks = true
	addImage(popt, sym)
}

// addImage gives the plan options the file's image for the flow graphs it
// builds (jump tables, callee names, C++ landing pads): with blocks, and
// under the in-process engine for the graph that checks an entry-only
// function's patch, once one needs it (PlanOptions.LoadImage: a function
// with a switch has no graph without its jump table, and its entry would
// keep its breakpoint).
func addImage(popt *breakpoint.PlanOptions, sym *symtab.File) {
	file, im, err := readImage(sym.Path)
	if err != nil {
		popt.CalleeName = cfg.CalleeNames(sym, nil)
		return
	}
	popt.CFGImage = im
	popt.CalleeName = cfg.CalleeNames(sym, im)
	// Without them a C++ function's catch blocks and cleanups are dead
	// code, or the function unrecoverable: not wrong counts, fewer.
	popt.LandingPads, _ = cfg.ELFLandingPads(file)
}

// readImage maps the file at path and reads its image for the flow graphs
// (sections, PLT and GOT), returning the file too for the callers that
// read more of it. The image reads the jump tables from the mapping as
// the graphs need them: of a large file, only its headers and tables are
// ever read (a Go program's 2.4 MB read whole took 4 to 9 ms).
func readImage(path string) (*mapfile.File, *cfg.ELFImage, error) {
	file, err := mapfile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	im, err := cfg.NewELFImage(file)
	if err != nil {
		return nil, nil, err
	}
	return file, im, nil
}

// landingPads reads the C++ landing pads of sym's file (milliseconds,
// from its exception tables alone), so that a function counted only at
// its entry needs no flow graph to know none lands in its patch
// (breakpoint's entry scan); nil when the file cannot be read, which
// leaves every entry to its graph.
func landingPads(sym *symtab.File) map[uint64][]uint64 {
	if !sym.HasSection(".gcc_except_table") {
		return map[uint64][]uint64{}
	}
	f, err := os.Open(sym.Path)
	if err != nil {
		return nil
	}
	defer f.Close()
	pads, err := cfg.ELFLandingPads(f)
	if err != nil {
		return nil
	}
	return pads
}

// addFlowNotes notes the functions of module m whose flow could not be
// recovered: no block counts, and lines counted at their rows with the
// previous-row rule instead of derived from blocks.
func addFlowNotes(p *profile.Profile, m *module, name string) {
	plan := m.plan
	in := ""
	if name != "" {
		in = " in " + name
	}
	const shown = 10
	for k, be := range plan.BlockErrors {
		if k == shown {
			p.Notes = append(p.Notes, fmt.Sprintf("%d more functions%s without block counts (control flow not recoverable)", len(plan.BlockErrors)-shown, in))
			break
		}
		p.Notes = append(p.Notes, fmt.Sprintf("no block counts for %s%s: %v; its lines are counted at their rows and its calls at its entry", plan.Funcs[be.Func].Name, in, be.Err))
	}
}

// addBlocks appends module m's block and edge counts to p: the blocks and
// edges lists, each function's edge total, each line's branch outcomes and
// each call's returns.
func addBlocks(p *profile.Profile, m *module, name string, c *breakpoint.Counts) {
	plan := m.plan
	if len(plan.Graphs) == 0 {
		return
	}
	funcAt := map[profile.Address]int{}
	for i, f := range p.Functions {
		if f.Module == name {
			funcAt[f.Address] = i
		}
	}
	lineAt := map[fileLine]int{}
	for i, l := range p.Lines {
		if l.Module == name {
			lineAt[fileLine{l.File, l.Line}] = i
		}
	}
	for gi, fg := range plan.Graphs {
		fc := funcCounts{m: m, name: name, gi: gi, fg: fg, c: c}
		fc.addFlow(p)
		if i, ok := funcAt[profile.Address(plan.Funcs[fg.Func].Addr)]; ok {
			p.Functions[i].Edges = len(fg.Graph.Edges) // blocks and returns: plan.Flow (profile.go)
		}
		if m.lt != nil {
			fc.addOutcomes(p, lineAt)
		}
	}
}

type fileLine struct {
	file string
	line int
}

// funcCounts are the counts of one block-counted function of a module, as
// addBlocks reports them.
type funcCounts struct {
	m      *module
	name   string // the module's name in the profile
	gi     int    // the function's graph in m.plan.Graphs
	fg     breakpoint.FuncGraph
	c      *breakpoint.Counts
	counts []uint64 // per block (addFlow)
}

// edge returns the count of the function's edge k.
func (fc *funcCounts) edge(k int) uint64 { return fc.c.EdgeCounts[int(fc.fg.FirstEdge)+k] }

// addFlow appends the function's blocks and edges to p.
func (fc *funcCounts) addFlow(p *profile.Profile) {
	t, g, c := fc.m.plan.Table, fc.fg.Graph, fc.c
	fnAddr := profile.Address(fc.m.plan.Funcs[fc.fg.Func].Addr)
	fc.counts = make([]uint64, len(g.Blocks))
	for k, b := range g.Blocks {
		if i, ok := t.Index(b.Start); ok {
			fc.counts[k] = c.Hits[i]
		}
		p.Blocks = append(p.Blocks, profile.Block{
			Address: profile.Address(b.Start), End: profile.Address(b.End), Function: fnAddr,
			Count: fc.counts[k], Entries: c.BlockArrivals[int(fc.fg.FirstBlock)+k], Module: fc.name,
		})
	}
	for k, e := range g.Edges {
		pe := profile.Edge{From: profile.Address(g.Blocks[e.From].Start), Kind: e.Kind.String(), Count: fc.edge(k), Module: fc.name}
		if e.To == cfg.Outside {
			// Nothing in this function traps where the jump lands: its
			// count is what left the block by no other edge.
			pe.To, pe.Exits = profile.Address(e.Target), true
			pe.Count = fc.counts[e.From]
			first := g.SuccIndex(e.From)
			for j, o := range g.Succs(e.From) {
				if o.To != cfg.Outside {
					pe.Count -= min(pe.Count, fc.edge(first+j))
				}
			}
		} else {
			pe.To = profile.Address(g.Blocks[e.To].Start)
		}
		p.Edges = append(p.Edges, pe)
	}
}

// addOutcomes appends to p the outcomes of the function's conditional
// branches and calls on the lines p lists (lineAt).
func (fc *funcCounts) addOutcomes(p *profile.Profile, lineAt map[fileLine]int) {
	m, g, counts := fc.m, fc.fg.Graph, fc.counts
	for k, b := range g.Blocks {
		succ := g.Succs(k)
		isCall := (b.Term == cfg.TermCall && len(succ) == 1) || b.Term == cfg.TermNoReturn
		if (b.Term != cfg.TermCond || len(succ) != 2) && !isCall {
			continue
		}
		// gcov files a block's arcs under the line it is listed
		// under; without the line model, under the jump's own line.
		file, line, ok := m.lt.Lookup(b.Last)
		if l, listed := m.plan.ListedLine(fc.gi, k); listed {
			file, line, ok = l.File, l.Line, true
		}
		if !ok {
			continue
		}
		if _, ok := lineAt[fileLine{file, line}]; !ok {
			continue
		}
		first := g.SuccIndex(k)
		if isCall && !fc.callListed(b) {
			continue // GCC ended no block after it: gcov lists no call
		}
		if isCall {
			returned := uint64(0) // a call that does not return (exit, longjmp)
			if b.Term == cfg.TermCall {
				// A longjmp back to a setjmp's return arrives along no
				// edge; gcov counts it as a return of the call.
				returned = fc.edge(first)
				if to := succ[0].To; to >= 0 {
					returned += fc.c.BlockArrivals[int(fc.fg.FirstBlock)+to]
				}
			}
			p.Calls = append(p.Calls, profile.Call{File: file, Line: line, Address: profile.Address(b.Last),
				Count: counts[k], Returned: returned, Module: fc.name})
			continue
		}
		taken, fall := fc.edge(first), fc.edge(first+1)
		if succ[0].To == cfg.Outside {
			taken = counts[k] - min(counts[k], fall)
		}
		p.Branches = append(p.Branches, profile.Branch{File: file, Line: line, Address: profile.Address(b.Last),
			Taken: taken, NotTaken: fall, Target: profile.Address(succ[0].Target),
			TrueFallthrough: trueFallthrough(m, g, k, line), Module: fc.name})
	}
}

// trueFallthrough infers whether the forward conditional jump ending block
// k of g, on line line, falls through on its condition's true arc, where
// GCC puts the block that follows it (gcov's fallthrough): the arc that
// leads to the nearer line below the condition (or on it, as the next
// operand of && does), the fall-through when they tie or neither does. An
// arc that only jumps back (a loop's closing jmp) leads nowhere below.
// GCC -O0 jumps over an if's body, but straight to a `break` or `goto`,
// whose line comes first.
func trueFallthrough(m *module, g *cfg.Graph, k, line int) bool {
	// lead returns the line an arc's destination starts, or 0 when it
	// jumps back.
	lead := func(e cfg.Edge) int {
		target := e.Target
		if to := e.To; to >= 0 && g.Blocks[to].Term == cfg.TermJump && g.Blocks[to].Insts == 1 {
			target = g.Succs(to)[0].Target
		}
		if target <= g.Blocks[k].Last {
			return 0
		}
		if _, l, ok := m.lt.Lookup(target); ok && l >= line {
			return l
		}
		return 0
	}
	succ := g.Succs(k)
	tl, fl := lead(succ[0]), lead(succ[1])
	switch {
	case tl == 0:
		return true
	case fl == 0:
		return false
	}
	return fl <= tl
}

// callListed reports whether gcov lists the call that ends block b: not
// a call to a builtin after which GCC ends no block
// (breakpoint.Plan.CallEndsBlock).
func (fc *funcCounts) callListed(b cfg.Block) bool {
	code, ok := fc.m.sym.Code(b.Last, int(b.End-b.Last))
	if !ok {
		return true
	}
	inst, err := symtab.DecodeInst(code)
	if err != nil || inst.Op != x86asm.CALL {
		return true
	}
	rel, ok := inst.Args[0].(x86asm.Rel)
	if !ok {
		return true
	}
	return fc.m.plan.CallEndsBlock(uint64(int64(b.Last) + int64(inst.Len) + int64(rel)))
}
