package profiler

import (
	"fmt"
	"slices"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/output"
	"github.com/patchprof/patchprof/profile"
	"golang.org/x/arch/x86/x86asm"
)

// Disasm builds the annotated disassembly (--disasm) of the
// block-counted functions, in every counted module, one of whose names
// match says yes to: each instruction with its source line, each block
// with its count and each branch with its edges' counts, as the profile
// Run returned reported them (Module.Counts), and with --time the blocks' sampled time from prof, the run's
// profile, where the samples were resolved to blocks. output.WriteDisasm
// renders it.
func (p *Profiler) Disasm(match func(name string) bool, prof *profile.Profile) []output.DisasmFunc {
	tm := blockTimes(prof)
	var fns []output.DisasmFunc
	for _, m := range p.Modules() {
		for _, fg := range m.Plan.Graphs {
			f := m.Plan.Funcs[fg.Func]
			if !match(f.Name) && !slices.ContainsFunc(f.Aliases, match) {
				continue
			}
			if m.Counts != nil {
				fns = append(fns, disasmOf(m, fg, tm))
			}
		}
	}
	return fns
}

// A blockTime is the sampled time of a block and the run's total samples,
// by module and block start; nil for a run without time.
type blockTime struct {
	total  uint64
	blocks map[blockKey]profile.Block
}

type blockKey struct {
	module string
	addr   uint64
}

// blockTimes indexes the blocks of p for their sampled time; nil when p
// has none.
func blockTimes(p *profile.Profile) *blockTime {
	if p == nil || !p.HasTime() {
		return nil
	}
	bt := &blockTime{total: p.Time.Samples, blocks: make(map[blockKey]profile.Block, len(p.Blocks))}
	for _, b := range p.Blocks {
		bt.blocks[blockKey{b.Module, uint64(b.Address)}] = b
	}
	return bt
}

// disasmOf decodes one block-counted function of m for WriteDisasm, with
// its blocks' sampled time from tm (nil without --time).
func disasmOf(m Module, fg breakpoint.FuncGraph, tm *blockTime) output.DisasmFunc {
	t := m.Plan.Table
	g := fg.Graph
	f := m.Plan.Funcs[fg.Func]
	df := output.DisasmFunc{Name: f.Name, Module: m.Name}
	if tm != nil {
		df.TotalSamples = tm.total
	}
	if i, ok := t.Index(f.Site); ok && f.Planted {
		df.Calls = m.Counts.Hits[i]
	}
	symname := func(addr uint64) (string, uint64) {
		if i, ok := m.Sym.FuncAt(addr); ok {
			return m.Sym.Funcs[i].Name, m.Sym.Funcs[i].Addr
		}
		return "", 0
	}
	for k, bl := range g.Blocks {
		code, ok := m.Sym.Code(bl.Start, int(bl.End-bl.Start))
		if !ok {
			continue
		}
		for off := 0; off < len(code); {
			pc := bl.Start + uint64(off)
			in := output.DisasmInst{Addr: pc}
			inst, err := x86asm.Decode(code[off:], 64)
			if err != nil || inst.Len == 0 {
				in.Text = fmt.Sprintf("(bad) %x", code[off:])
				off = len(code)
			} else {
				in.Text = x86asm.GNUSyntax(inst, pc, symname)
				off += inst.Len
			}
			if m.Lines != nil {
				in.File, in.Line, _ = m.Lines.Lookup(pc)
			}
			if pc == bl.Start {
				in.Block = true
				if i, ok := t.Index(pc); ok {
					in.Count = m.Counts.Hits[i]
				}
				if tm != nil {
					pb := tm.blocks[blockKey{m.Name, pc}]
					in.Samples, in.TimeNS = pb.Samples, pb.TimeNS
				}
			}
			if pc == bl.Last {
				first := g.SuccIndex(k)
				for j, e := range g.Succs(k) {
					to := e.Target
					if e.To != cfg.Outside {
						to = g.Blocks[e.To].Start
					}
					in.Out = append(in.Out, output.DisasmEdge{Kind: e.Kind.String(), To: to, Count: m.Counts.EdgeCounts[int(fg.FirstEdge)+first+j]})
				}
			}
			df.Insts = append(df.Insts, in)
		}
	}
	return df
}
