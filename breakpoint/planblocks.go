package breakpoint

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/lineinfo"
	"github.com/patchprof/patchprof/symtab"
)

// A BlockError is a selected function whose control flow cfg could not
// recover: it gets line and function sites only, no block sites.
type BlockError struct {
	Func int   // index into Plan.Funcs
	Err  error // a *cfg.Error
}

// blockSpecs builds the flow graph of every function to be counted by
// blocks and returns a site at each block start, numbering the blocks and
// edges table-wide in address order of the functions. With opt.Blocks
// that is every kept function; with only opt.Lines, every kept function
// with a row in a kept file (its lines are derived from its blocks). A
// function whose flow cannot be recovered gets a BlockError, never a
// guessed graph. Calls end blocks (cfg.Options.SplitCalls), as in GCC's
// graph.
func (p *Plan) blockSpecs(sym *symtab.File, lt *lineinfo.Table, keepFunc []bool, keepFile func(string) bool, noLines []bool, opt PlanOptions) []SiteSpec {
	type job struct {
		fi   int
		code []byte
		g    *cfg.Graph
		err  error
	}
	var jobs []job
	for i, f := range sym.Funcs {
		if !keepFunc[i] || f.Size == 0 {
			continue
		}
		if !opt.Blocks && (noLines[i] || !hasKeptRow(lt, f.Addr, f.Addr+f.Size, keepFile)) {
			continue
		}
		code, ok := sym.Code(f.Addr, int(f.Size))
		if !ok {
			continue
		}
		jobs = append(jobs, job{fi: i, code: code})
	}
	// The graphs are built on every CPU (cfg.Build reads only its options),
	// then numbered in address order as one would have.
	parallel(len(jobs), func(k int) {
		j := &jobs[k]
		f := sym.Funcs[j.fi]
		j.g, j.err = cfg.Build(cfg.Options{Name: f.Name, Addr: f.Addr, Code: j.code, Image: opt.CFGImage, CalleeName: opt.CalleeName, CalleeWrites: p.calleeWrites(sym), SplitCalls: true, LandingPads: opt.LandingPads[f.Addr]})
	})
	// Sized once: a large program has millions of blocks.
	blocks := 0
	for _, j := range jobs {
		if j.err == nil {
			blocks += len(j.g.Blocks)
		}
	}
	specs := make([]SiteSpec, 0, blocks)
	p.Graphs = slices.Grow(p.Graphs, len(jobs))
	nb, ne := 0, 0
	for _, j := range jobs {
		i, f, g := j.fi, sym.Funcs[j.fi], j.g
		if j.err != nil {
			p.BlockErrors = append(p.BlockErrors, BlockError{Func: i, Err: j.err})
			continue
		}
		entry, tail := p.entryOf(sym, i, opt.GoPrologue)
		fg := FuncGraph{Func: int32(i), Graph: g, Entry: entry, Tail: tail, FirstBlock: int32(nb), FirstEdge: int32(ne)}
		for k, b := range g.Blocks {
			s := SiteSpec{Addr: b.Start, Kind: KindBlock, Func: int32(i), Entry: b.Start == entry, Block: int32(nb + k)}
			markRep(&s, j.code[b.Start-f.Addr:])
			specs = append(specs, s)
		}
		nb += len(g.Blocks)
		ne += len(g.Edges)
		p.Graphs = append(p.Graphs, fg)
	}
	return specs
}

// calleeWrites returns what a direct call may change, read from sym's
// code once per plan (cfg.CalleeRegs): GCC at -O2 keeps a jump table's
// base across a call to a helper that leaves its register alone.
func (p *Plan) calleeWrites(sym *symtab.File) func(uint64) cfg.RegSet {
	p.calleeOnce.Do(func() { p.callee = cfg.NewCalleeRegs(sym) })
	return p.callee.Writes
}

// parallel runs do(0) to do(n-1) on as many goroutines as there are CPUs,
// and returns when all have returned.
func parallel(n int, do func(k int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for k := range n {
			do(k)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := int(next.Add(1) - 1); k < n; k = int(next.Add(1) - 1) {
				do(k)
			}
		}()
	}
	wg.Wait()
}

// hasKeptRow reports whether lt has a statement row in [lo, hi) of a file
// keepFile keeps.
func hasKeptRow(lt *lineinfo.Table, lo, hi uint64, keepFile func(string) bool) bool {
	if lt == nil {
		return false
	}
	for _, r := range lt.RowsIn(lo, hi) {
		if int(r.File) < len(lt.Files) && keepFile(lt.Files[r.File]) {
			return true
		}
	}
	return false
}

// A FlowSummary is what the block counts say about one call-counted
// function as a whole, as gcov's "function NAME called N returned R%
// blocks executed B%" line reports it.
type FlowSummary struct {
	Blocks, Executed int    // blocks of the function, and how many ran
	Returns          uint64 // how often it returned (its ret and tail-call blocks ran)
}

// Flow returns the summary of function fi (index into Funcs), when it was
// counted by blocks. Go's stack-check blocks, which run before the call
// is counted, are left out.
func (p *Plan) Flow(c *Counts, fi int) (FlowSummary, bool) {
	gi, ok := p.graphIndex(fi)
	if !ok {
		return FlowSummary{}, false
	}
	fg := p.Graphs[gi]
	var s FlowSummary
	for _, b := range fg.Graph.Blocks {
		if b.Start < fg.Entry || b.Start >= fg.Tail {
			continue
		}
		var n uint64
		if i, ok := p.Table.Index(b.Start); ok {
			n = c.Hits[i]
		}
		s.Blocks++
		if n > 0 {
			s.Executed++
		}
		if b.Term == cfg.TermReturn || b.Term == cfg.TermTailCall {
			s.Returns += n
		}
	}
	return s, true
}

// graphIndex returns the index in Graphs of function fi's flow graph,
// through an index built at the first call (after NewPlan, which is
// the last to change Graphs): a report asks once per function, and a
// scan of Graphs each time made a program of 100,000 functions take
// minutes.
func (p *Plan) graphIndex(fi int) (int, bool) {
	p.graphOnce.Do(func() {
		p.graphAt = make([]int32, len(p.Funcs))
		for i := range p.graphAt {
			p.graphAt[i] = -1
		}
		for gi, fg := range p.Graphs {
			if int(fg.Func) < len(p.graphAt) && p.graphAt[fg.Func] < 0 {
				p.graphAt[fg.Func] = int32(gi)
			}
		}
	})
	if fi < 0 || fi >= len(p.graphAt) || p.graphAt[fi] < 0 {
		return 0, false
	}
	return int(p.graphAt[fi]), true
}
