package breakpoint

import (
	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/symtab"
)

// A BlockError is a selected function whose control flow cfg could not
// recover: it gets line and function sites only, no block sites.
type BlockError struct {
	Func int   // index into Plan.Funcs
	Err  error // a *cfg.Error
}

// blockSpecs builds the flow graph of every kept function and returns a site
// at each block start, numbering the blocks and edges table-wide in address
// order of the functions. A function whose flow cannot be recovered gets a
// BlockError, never a guessed graph.
func (p *Plan) blockSpecs(sym *symtab.File, keepFunc []bool, opt PlanOptions) []SiteSpec {
	var specs []SiteSpec
	nb, ne := 0, 0
	for i, f := range sym.Funcs {
		if !keepFunc[i] || f.Size == 0 {
			continue
		}
		code, ok := sym.Code(f.Addr, int(f.Size))
		if !ok {
			continue
		}
		g, err := cfg.Build(cfg.Options{Name: f.Name, Addr: f.Addr, Code: code, Image: opt.CFGImage, CalleeName: opt.CalleeName})
		if err != nil {
			p.BlockErrors = append(p.BlockErrors, BlockError{Func: i, Err: err})
			continue
		}
		entry, tail := p.entryOf(sym, i, opt.GoPrologue)
		fg := FuncGraph{Func: int32(i), Graph: g, Entry: entry, Tail: tail, FirstBlock: int32(nb), FirstEdge: int32(ne)}
		for k, b := range g.Blocks {
			s := SiteSpec{Addr: b.Start, Kind: KindBlock, Func: int32(i), Entry: b.Start == entry, Block: int32(nb + k)}
			markRep(&s, code[b.Start-f.Addr:])
			specs = append(specs, s)
		}
		nb += len(g.Blocks)
		ne += len(g.Edges)
		p.Graphs = append(p.Graphs, fg)
	}
	return specs
}
