package breakpoint

import (
	"github.com/patchprof/patchprof/breakpoint/linemodel"
	"github.com/patchprof/patchprof/lineinfo"
	"github.com/patchprof/patchprof/symtab"
)

// The plan's side of gcc's line model (package linemodel): building it
// over the plan's flow graphs, numbering its lines first in p.Lines, and
// handing it the table's counts.

// modelGraphs returns the plan's flow graphs as the line model takes them.
func (p *Plan) modelGraphs() []linemodel.Graph {
	graphs := make([]linemodel.Graph, len(p.Graphs))
	for gi, fg := range p.Graphs {
		graphs[gi] = linemodel.Graph{Func: int(fg.Func), Graph: fg.Graph, Entry: fg.Entry, Tail: fg.Tail, FirstBlock: int(fg.FirstBlock), FirstEdge: int(fg.FirstEdge)}
	}
	return graphs
}

// buildModel models the lines of the functions counted by blocks and
// numbers the lines the report shows, which come first in p.Lines.
func (p *Plan) buildModel(sym *symtab.File, lt *lineinfo.Table, graphs []linemodel.Graph, keepFile func(string) bool, opt PlanOptions) {
	p.model = linemodel.Build(linemodel.Inputs{Sym: sym, Rows: lt, Subprograms: opt.Subprograms, Graphs: graphs, KeepFile: keepFile, Source: opt.Source, CallName: opt.CalleeName})
	for k, ref := range p.model.Lines {
		p.lineRef(ref, int(p.model.LineFuncs[k]))
	}
}

// lineRef returns the index in p.Lines of ref, adding it on first sight
// as a line of function fi.
func (p *Plan) lineRef(ref LineRef, fi int) int32 {
	if i, ok := p.lineIndex[ref]; ok {
		return i
	}
	if p.lineIndex == nil {
		p.lineIndex = make(map[LineRef]int32)
	}
	i := int32(len(p.Lines))
	p.lineIndex[ref] = i
	p.Lines = append(p.Lines, ref)
	p.LineFuncs = append(p.LineFuncs, int32(fi))
	return i
}

// LineCounts returns the count of every line of p.Lines in c: derived from
// block and arc counts for the functions counted by blocks, the entries
// the cursor counted (Counts.LineEntries) for the others. A non-nil fault
// is where the run ended in the middle of a block: the lines after it get
// no credit for that last entry.
//
// unexecuted is true for a line one of whose blocks never ran (gcov's '*'),
// known only for the lines derived from blocks. unknown is true for a line
// whose count the run cannot tell (an empty case that shares its jump-table
// entries with other values, when they ran): it has no count. See
// linemodel.Model.Counts.
func (p *Plan) LineCounts(c *Counts, fault *linemodel.Fault) (counts []uint64, unexecuted, unknown []bool) {
	p.Wait()
	return p.model.Counts(p.blockHits(c), c.EdgeCounts, c.BlockArrivals, p.lineEntries(c), c.Entries, fault)
}

// Wait returns once the line model, Lines and LineFuncs are whole: at
// once unless PlanOptions.ModelAfter builds them beside the run.
func (p *Plan) Wait() {
	if p.modelDone != nil {
		<-p.modelDone
	}
}

// lineEntries returns c's line entries by index of p.Lines.
func (p *Plan) lineEntries(c *Counts) []uint64 {
	out := make([]uint64, len(p.Lines))
	for k, n := range c.LineEntries {
		if k < len(p.lineFinal) {
			out[p.lineFinal[k]] += n
		}
	}
	return out
}

// SiteLines returns the indexes in Lines of the source lines whose rows
// start at site i (Table.Lines, renumbered), once Wait has returned.
func (p *Plan) SiteLines(i int) []int32 {
	ls := p.Table.Lines(i)
	out := make([]int32, len(ls))
	for k, l := range ls {
		out[k] = p.lineFinal[l]
	}
	return out
}

// blockHits returns the hits in c of each block's site, by table-wide
// block index (FuncGraph.FirstBlock).
func (p *Plan) blockHits(c *Counts) []uint64 {
	hits := make([]uint64, len(c.BlockArrivals))
	if p.model == nil {
		return hits
	}
	for _, fg := range p.Graphs {
		for b, bl := range fg.Graph.Blocks {
			if i, ok := p.Table.Index(bl.Start); ok {
				hits[int(fg.FirstBlock)+b] = c.Hits[i]
			}
		}
	}
	return hits
}

// ListedLine returns the line block b of graph gi (index into Graphs) is
// listed under in the line model, as gcov files the block's calls and
// branches: the last line of its statements. ok is false when the block
// has none or the function's lines were not derived from blocks.
func (p *Plan) ListedLine(gi, b int) (LineRef, bool) {
	p.Wait()
	return p.model.ListedLine(gi, b)
}

// InstanceCounts returns the own line counts of each function that shares
// its entry's file and line with another modelled function: the instances
// of a C++ template (gcov's groups). A function whose lines were not
// derived from blocks is in no group: its lines' entries are counted per
// line, not per function. The counts are those LineCounts sums.
func (p *Plan) InstanceCounts(c *Counts, fault *linemodel.Fault) []linemodel.FuncLines {
	p.Wait()
	funcs := p.model.Funcs()
	byEntry := make(map[LineRef][]int, len(funcs))
	for _, fi := range funcs {
		if f := p.Funcs[fi]; f.File != "" && f.Line > 0 {
			k := LineRef{File: f.File, Line: f.Line}
			byEntry[k] = append(byEntry[k], fi)
		}
	}
	grouped := make(map[int]bool)
	for _, fs := range byEntry {
		if len(fs) > 1 {
			for _, fi := range fs {
				grouped[fi] = true
			}
		}
	}
	if len(grouped) == 0 {
		return nil
	}
	return p.model.FuncCounts(grouped, p.blockHits(c), c.EdgeCounts, c.BlockArrivals, c.Entries, fault)
}

// CallEndsBlock reports whether GCC ends a block after a call to target,
// so that gcov lists the call (linemodel.Model.CallEndsBlock); true
// without a line model.
func (p *Plan) CallEndsBlock(target uint64) bool {
	p.Wait()
	return p.model.CallEndsBlock(target)
}
