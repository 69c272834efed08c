package profiler

import (
	"cmp"
	"slices"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/profile"
	"github.com/patchprof/patchprof/symtab"
)

// addCallGraph appends the call arcs of every counted module to p
// (--calls), names the callees of PLT calls in the module that defines
// them, and accounts for the rest of each function's entries.
func addCallGraph(p *profile.Profile, root *module, sel *selection) {
	addArcs(p, root, "")
	for _, m := range sel.mods {
		if m.counted && m.path != root.sym.Path {
			addArcs(p, m, m.path)
		}
	}
	bindImports(p)
	p.SetUnknownArcs()
}

// addArcs appends to p the arcs of the call sites of module m's
// block-counted functions. Calls end blocks (cfg.Options.SplitCalls), so
// a call instruction runs as often as the block it ends: once per entry
// of the block, less an activation that stopped inside it (a fault, an
// exit from another thread), as for profile.Call. A jump that leaves the
// function for another's entry is a tail call, taken as often as its
// edge. A call whose target is not in the code is an indirect arc: its
// site's count, without a callee.
func addArcs(p *profile.Profile, m *module, name string) {
	plan, c := m.plan, m.counts
	if c == nil {
		return
	}
	// A site is listed once per callee, even when two symbols' graphs
	// share its code or both arms of a branch leave for one function.
	type key struct {
		site   profile.Address
		callee string
		kind   string
	}
	seen := map[key]bool{}
	add := func(as ...profile.Arc) {
		for _, a := range as {
			if k := (key{a.Site, a.Callee, a.Kind}); !seen[k] {
				seen[k] = true
				p.Arcs = append(p.Arcs, a)
			}
		}
	}
	entered := map[int32][]breakpoint.IndirectArc{} // by block
	for ia := range c.Indirect {
		entered[ia.Block] = append(entered[ia.Block], ia)
	}
	for _, fg := range plan.Graphs {
		caller := plan.Funcs[fg.Func].Name
		g := fg.Graph
		for k, b := range g.Blocks {
			i, ok := plan.Table.Index(b.Start)
			if !ok {
				continue
			}
			count := c.Hits[i]
			site := profile.Arc{Caller: caller, Site: profile.Address(b.Last), Module: name}
			if m.lt != nil {
				if file, line, ok := m.lt.Lookup(b.Last); ok {
					site.File, site.Line = file, line
				}
			}
			switch b.Term {
			case cfg.TermCall, cfg.TermNoReturn:
				if a, ok := m.callArc(site, b, count); ok {
					add(m.indirectArcs(a, fg.FirstBlock+int32(k), entered)...)
				}
			case cfg.TermTailCall, cfg.TermCond:
				for _, a := range m.tailArcs(site, fg, k, count) {
					add(m.indirectArcs(a, fg.FirstBlock+int32(k), entered)...)
				}
			}
		}
	}
}

// callArc returns the arc of the call instruction ending block b, which
// ran count times; false when b ends in no call (a block cut short before
// padding) or the call's target is no function entry (a call to the next
// instruction that reads the PC).
func (m *module) callArc(site profile.Arc, b cfg.Block, count uint64) (profile.Arc, bool) {
	code, ok := m.sym.Code(b.Last, int(b.End-b.Last))
	if !ok {
		return site, false
	}
	inst, err := symtab.DecodeInst(code)
	if err != nil || inst.Op != x86asm.CALL {
		return site, false
	}
	site.Count = count
	rel, ok := inst.Args[0].(x86asm.Rel)
	if !ok {
		if name := m.gotCallee(inst, b.End); name != "" {
			// -fno-plt: the call reads the GOT slot a PLT stub
			// would, bound like one (bindImports).
			site.Kind, site.Callee, site.Outside = profile.ArcPLT, name, true
			return site, true
		}
		site.Kind = profile.ArcIndirect
		return site, true
	}
	return m.resolve(site, uint64(int64(b.End)+int64(rel)), profile.ArcDirect)
}

// gotCallee returns the symbol whose GOT slot call instruction inst,
// ending at link-time address end, reads (`call *foo@GOTPCREL(%rip)`, as
// GCC's -fno-plt emits for a function of another module), or "".
func (m *module) gotCallee(inst x86asm.Inst, end uint64) string {
	mem, ok := inst.Args[0].(x86asm.Mem)
	if !ok || m.got == nil || mem.Base != x86asm.RIP || mem.Index != 0 || mem.Segment != 0 {
		return ""
	}
	return m.got(uint64(int64(end) + mem.Disp))
}

// gotNames returns the GOT slot namer of the module whose plan options
// are popt: its ELF image's, nil when the file was not read as one.
func gotNames(popt breakpoint.PlanOptions) func(uint64) string {
	if im, ok := popt.CFGImage.(*cfg.ELFImage); ok && im != nil {
		return im.GOTName
	}
	return nil
}

// indirectArcs returns the arcs of call arc a, which ends table-wide block
// gb: a itself when it is not an indirect call; else one arc per function
// its callees' entries showed it entered (entered: the counted
// breakpoint.IndirectArc of each block, under the trap engines), and the
// rest of its calls, whose callees are not known, without a callee.
func (m *module) indirectArcs(a profile.Arc, gb int32, entered map[int32][]breakpoint.IndirectArc) []profile.Arc {
	if a.Kind != profile.ArcIndirect || len(entered[gb]) == 0 {
		return []profile.Arc{a}
	}
	var out []profile.Arc
	known := uint64(0)
	for _, ia := range entered[gb] {
		n := m.counts.Indirect[ia]
		if n == 0 || ia.Callee < 0 || int(ia.Callee) >= len(m.plan.Funcs) {
			continue
		}
		f := m.plan.Funcs[ia.Callee]
		b := a
		b.Callee, b.CalleeAddress, b.CalleeModule, b.Count = f.Name, profile.Address(f.Addr), a.Module, n
		out = append(out, b)
		known += n
	}
	slices.SortFunc(out, func(x, y profile.Arc) int { return cmp.Compare(x.CalleeAddress, y.CalleeAddress) })
	if a.Count > known {
		a.Count -= known
		out = append(out, a)
	}
	return out
}

// tailArcs returns the tail calls that leave the function of fg from its
// block k, which ran count times: a direct jump's (count), a conditional
// branch's to another function (the count less the fall-through's), an
// indirect jump's that no jump table explains (count, without a callee:
// indirectArcs names the callees its entries saw).
func (m *module) tailArcs(site profile.Arc, fg breakpoint.FuncGraph, k int, count uint64) []profile.Arc {
	g, c := fg.Graph, m.counts
	succ := g.Succs(k)
	first := g.SuccIndex(k)
	if g.Blocks[k].Term == cfg.TermTailCall && len(succ) == 0 {
		site.Kind, site.Jump, site.Count = profile.ArcIndirect, true, count
		return []profile.Arc{site}
	}
	var out []profile.Arc
	for j, e := range succ {
		if e.To != cfg.Outside {
			continue
		}
		n := count
		for jj := range succ {
			if jj != j {
				n -= min(n, c.EdgeCounts[int(fg.FirstEdge)+first+jj])
			}
		}
		a := site
		a.Count = n
		if a, ok := m.resolve(a, e.Target, profile.ArcTail); ok {
			out = append(out, a)
		}
	}
	return out
}

// resolve names the callee at link-time address target of module m in
// arc a of kind kind (ArcDirect or ArcTail): a function's entry in m, or
// a PLT stub, whose function bindImports finds. A jump to a part GCC split
// off a function (foo.cold) is no call: false.
func (m *module) resolve(a profile.Arc, target uint64, kind string) (profile.Arc, bool) {
	a.Kind = kind
	if i, ok := m.sym.FuncAt(target); ok && m.sym.Funcs[i].Addr == target {
		name := m.sym.Funcs[i].Name
		if isColdPart(name) {
			return a, false
		}
		a.Callee, a.CalleeAddress, a.CalleeModule = name, profile.Address(target), a.Module
		return a, true
	}
	if m.callee == nil {
		return a, false
	}
	name := m.callee(target)
	if name == "" {
		return a, false
	}
	if kind == profile.ArcDirect {
		a.Kind = profile.ArcPLT
	}
	a.Callee, a.Outside = name, true // bound by bindImports
	return a, true
}

// isColdPart reports whether a symbol names the part of a function GCC
// moved away from its hot path (foo.cold, foo.cold.1): jumped to, never
// called.
func isColdPart(name string) bool {
	return strings.HasSuffix(name, ".cold") || strings.Contains(name, ".cold.")
}

// bindImports names, for each arc to a PLT stub, the counted function it
// binds to: the first module in the dynamic linker's search order (the
// executable, then the libraries) that defines a function of that name.
// A callee no counted module defines (the C library's) stays Outside.
func bindImports(p *profile.Profile) {
	type def struct {
		module string
		addr   profile.Address
	}
	defs := make(map[string]def)
	order := p.ModulePaths()
	for _, mod := range order {
		for _, f := range p.Functions {
			if _, seen := defs[f.Name]; !seen && f.Module == mod {
				defs[f.Name] = def{f.Module, f.Address}
			}
		}
	}
	for i := range p.Arcs {
		a := &p.Arcs[i]
		if !a.Outside {
			continue
		}
		if d, ok := defs[a.Callee]; ok {
			a.Outside, a.CalleeModule, a.CalleeAddress = false, d.module, d.addr
		}
	}
}

// countIndirect asks module m's table to count which function each of its
// indirect calls enters (breakpoint.Table.SetIndirectCalls) under the
// trap engines, where every block start and function entry traps; the
// in-process engine counts them in the target (Plan.IndirectCalls with
// PlanOptions.Calls). Only the calls whose block changes the stack
// pointer before them in a way the code says (push, pop, add or sub of a
// constant) are counted.
func (m *module) countIndirect() {
	if len(m.plan.IndirectCalls) > 0 {
		m.plan.Table.SetIndirectCalls(m.plan.IndirectCalls)
	}
}
