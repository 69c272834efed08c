package profiler

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/breakpoint/jump"
	"github.com/patchprof/patchprof/breakpoint/linemodel"
	"github.com/patchprof/patchprof/monitor"
	"github.com/patchprof/patchprof/profile"
)

// buildProfile resolves the monitor's counts to files, lines and functions:
// the executable's, then every other module that counted something.
func buildProfile(root *module, sel *selection, res *monitor.Result, mode string, args []string) *profile.Profile {
	exe := root.sym.Path
	if root.shown != "" {
		exe = root.shown
	}
	p := &profile.Profile{
		Version:    profile.Version,
		Executable: exe,
		BuildID:    root.sym.BuildID,
		Args:       args,
		Mode:       mode,
		Lines:      []profile.Line{},
		Functions:  []profile.Function{},
		Sites:      []profile.Site{},
	}
	var fault faultSite
	p.Exit, fault = exitOf(root, sel, res)
	fault.handled = res.Handled
	fault.threads = res.ThreadEnds
	addModule(p, root, "", mode, sel.blocks, fault, countsOf(res, root))
	for _, m := range sel.mods {
		if !m.counted || m.path == root.sym.Path {
			continue
		}
		p.Modules = append(p.Modules, profile.Module{Path: m.path, BuildID: m.sym.BuildID, Kind: m.kind})
		addModule(p, m, m.path, mode, sel.blocks, fault, countsOf(res, m))
	}
	if sel.calls {
		addCallGraph(p, root, sel)
	}
	p.Sort()
	return p
}

// A faultSite is where a run that died of a signal stopped: the module
// and the link-time address of the faulting instruction (or of the call
// that led to it). m is nil when the run did not fault in a profiled
// module.
type faultSite struct {
	m    *module
	addr uint64
	// entered: the thread had begun the block at addr (the instruction
	// there faulted, or the block's count was taken); a signal sent to
	// the process may have stopped it at a block's first instruction
	// before that (monitor.Fault.Entered).
	entered bool
	// handled are the faults the program's own handlers took.
	handled []monitor.HandledFault
	// threads are where threads were when they ended.
	threads []monitor.ThreadEnd
}

// countsOf returns the counts of module m in res, the reader's own copy;
// zero counts for a module the run never mapped.
func countsOf(res *monitor.Result, m *module) *breakpoint.Counts {
	if c := res.Counts[m.plan.Table]; c != nil {
		return c
	}
	return m.plan.Table.Counts()
}

// addModule appends module m's counts c to p under the module name name;
// blocks and edges only when they were asked for (--blocks). c, the
// profile's own copy, takes the derived counts, and is kept as m's last
// (Module.Counts).
func addModule(p *profile.Profile, m *module, name, mode string, blocks bool, fault faultSite, c *breakpoint.Counts) {
	plan := m.plan
	t := plan.Table
	var at *linemodel.Fault
	if fault.m == m {
		at = &linemodel.Fault{Addr: fault.addr, Entered: fault.entered}
	}
	// Under the in-process engine, the edges of the functions it serves
	// follow from their block counts (a no-op for the other engines),
	// less the activations that stopped inside a block.
	if _, n := t.DeriveFlow(c, stopsIn(m, fault)); n > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d functions%s have inexact edge and line counts: an arc they need could not be counted "+
			"in the target (its site kept a breakpoint); run with --engine xol for exact counts", n, inModule(name)))
	}
	if mode != profile.ModeFuncs {
		counts, unexecuted, unknown := plan.LineCounts(c, at)
		untold := 0
		// The whole module's rows at once: growing a profile of 100,000
		// functions by appends was a tenth of its run.
		p.Lines = slices.Grow(p.Lines, len(counts))
		for i, c := range counts {
			if unknown[i] {
				untold++
				continue // no count the run can tell: no line, as for a line without code
			}
			l := plan.Lines[i]
			fn := ""
			if k := plan.LineFuncs[i]; k >= 0 && int(k) < len(plan.Funcs) {
				fn = plan.Funcs[k].Name
			}
			p.Lines = append(p.Lines, profile.Line{File: l.File, Line: l.Line, Count: c, Function: fn, UnexecutedBlock: unexecuted[i], Module: name})
		}
		addInstances(p, m, name, plan.InstanceCounts(c, at), unknown)
		addSources(p, m, name)
		if untold > 0 {
			p.Notes = append(p.Notes, fmt.Sprintf("%d lines%s of cases with no code (a label and its break) have no count: "+
				"their jump-table entries are shared with other values that ran, and the binary does not say which are theirs", untold, inModule(name)))
		}
		reasons := map[string]int{}
		for _, d := range plan.Dropped {
			p.Dropped = append(p.Dropped, profile.Dropped{Address: profile.Address(d.Addr), File: d.File, Line: d.Line, Reason: d.Reason, Module: name})
			reasons[d.Reason]++
		}
		var keys []string
		for k := range reasons {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		in := ""
		if name != "" {
			in = " in " + name
		}
		for _, k := range keys {
			p.Notes = append(p.Notes, fmt.Sprintf("%d line-table rows%s not planted: %s", reasons[k], in, k))
		}
	}
	if mode != profile.ModeLines {
		p.Functions = slices.Grow(p.Functions, len(plan.Funcs))
		for fi, f := range plan.Funcs {
			if !f.Planted {
				continue
			}
			i, ok := t.Index(f.Site)
			if !ok {
				continue
			}
			pf := profile.Function{Name: f.Name, Count: c.Hits[i], File: f.File, Line: f.Line, Address: profile.Address(f.Addr), Module: name}
			if s, ok := plan.Flow(c, fi); ok {
				pf.Blocks, pf.BlocksExecuted, pf.Returns = s.Blocks, s.Executed, s.Returns
			}
			p.Functions = append(p.Functions, pf)
		}
	} else {
		p.Functions = append(p.Functions, entryCounts(plan, c, name)...)
	}
	p.Sites = slices.Grow(p.Sites, t.Len())
	for i := 0; i < t.Len(); i++ {
		if t.Kind(i) == 0 {
			continue // the dynamic linker's notification point: ours, not the program's
		}
		p.Sites = append(p.Sites, profile.Site{Address: profile.Address(t.Addr(i)), Count: c.Hits[i], Kind: t.Kind(i).String(), Module: name})
	}
	addFlowNotes(p, m, name)
	if blocks {
		addBlocks(p, m, name, c)
	}
	m.counts = c
}

// addSources records the MD5 digest module m's line table keeps of each
// source file its counted lines are in, so that a report can tell a
// source changed since the build (output's stale-source note).
func addSources(p *profile.Profile, m *module, name string) {
	if m.lt == nil {
		return
	}
	seen := make(map[string]bool)
	for _, l := range m.plan.Lines {
		if seen[l.File] {
			continue
		}
		seen[l.File] = true
		if sum, ok := m.lt.MD5(l.File); ok {
			p.Sources = append(p.Sources, profile.Source{File: l.File, MD5: hex.EncodeToString(sum[:]), Module: name})
		}
	}
}

// entryCounts returns the functions of a lines-only run with their calls:
// the count of the site at each function's entry (its entry block, or the
// line-table row at its low PC), the arrivals a function site counts under
// --funcs, so no site is planted for them. Their blocks and returns come
// with them when their flow was counted. A function without a site at its
// entry (no line information) is left out, as its lines are.
func entryCounts(plan *breakpoint.Plan, c *breakpoint.Counts, name string) []profile.Function {
	t := plan.Table
	var out []profile.Function
	seen := make(map[int32]bool)
	for i := 0; i < t.Len(); i++ {
		fi := t.Func(i)
		if !t.IsEntry(i) || fi < 0 || int(fi) >= len(plan.Funcs) || seen[fi] {
			continue
		}
		seen[fi] = true
		f := plan.Funcs[fi]
		pf := profile.Function{Name: f.Name, Count: c.Hits[i], File: f.File, Line: f.Line, Address: profile.Address(f.Addr), Module: name}
		if s, ok := plan.Flow(c, int(fi)); ok {
			pf.Blocks, pf.BlocksExecuted, pf.Returns = s.Blocks, s.Executed, s.Returns
		}
		out = append(out, pf)
	}
	return out
}

// placed is a module and the load bias it had in the faulting process.
type placed struct {
	m      *module
	bias   uint64
	lo, hi uint64
}

// placesOf resolves the images mapped at a fault to modules.
func placesOf(root *module, sel *selection, res *monitor.Result) []placed {
	byTable := map[*breakpoint.Table]*module{root.plan.Table: root}
	for _, m := range sel.mods {
		byTable[m.plan.Table] = m
	}
	var out []placed
	if f := res.Exit.Fault; f != nil && f.Maps != nil {
		for _, mp := range f.Maps {
			if m := byTable[mp.Image.Table]; m != nil {
				out = append(out, placed{m, mp.Bias, mp.Lo, mp.Hi})
			}
		}
		return out
	}
	// No map of the process: the executable at the run's bias.
	return []placed{{root, res.Bias, 0, ^uint64(0)}}
}

// exitOf describes how the target ended; for a death by signal, where: the
// faulting thread's PC, or, when that lies outside every profiled module (in
// libc's abort, say), the innermost return address on its stack that lies in
// one.
func exitOf(root *module, sel *selection, res *monitor.Result) (profile.Exit, faultSite) {
	e := res.Exit
	if e.Detached {
		return profile.Exit{Detached: true}, faultSite{}
	}
	if e.Signal == 0 {
		code := e.Code
		return profile.Exit{Code: &code}, faultSite{}
	}
	x := profile.Exit{Signal: profile.SignalName(e.Signal)}
	f := e.Fault
	if f == nil {
		return x, faultSite{}
	}
	switch e.Signal {
	case 11, 7, 4, 8: // SIGSEGV, SIGBUS, SIGILL, SIGFPE
		x.FaultAddress = new(profile.Address(f.Addr))
	}
	places := placesOf(root, sel, res)
	// in returns the module whose code holds the runtime address pc.
	in := func(pc uint64) (*module, uint64, bool) {
		for _, pl := range places {
			if pc < pl.lo || pc >= pl.hi {
				continue
			}
			if _, ok := pl.m.sym.FuncAt(pc - pl.bias); ok {
				return pl.m, pc - pl.bias, true
			}
		}
		return nil, 0, false
	}
	var (
		where uint64
		wm    *module
	)
	entered := true // inside a call instruction, from a return address
	if m, link, ok := in(f.PC); ok {
		where, wm, entered = link, m, f.Entered
		x.PC = new(profile.Address(link))
	} else {
		x.PC = new(profile.Address(f.PC))
		x.PCOutside = true
		for k := 0; k+8 <= len(f.Stack); k += 8 {
			ra := binary.LittleEndian.Uint64(f.Stack[k:])
			if m, link, ok := in(ra); ok && m.sym.IsReturnAddress(link) {
				where, wm = link-1, m // inside the call instruction, on its line
				break
			}
		}
	}
	if wm == nil {
		return x, faultSite{}
	}
	if wm != root {
		x.Module = wm.path
	}
	if i, ok := wm.sym.FuncAt(where); ok {
		x.Function = wm.sym.Funcs[i].Name
	}
	if wm.lt != nil {
		if file, line, ok := wm.lt.Lookup(where); ok {
			x.File, x.Line = file, line
		}
	}
	return x, faultSite{m: wm, addr: where, entered: entered}
}

// stopsIn returns where, in module m, an activation stopped for good
// (Table.DeriveFlow): where the thread a signal killed the process
// through was, and each instruction that faulted into a handler of the
// program that never came back to it: in a Go program every one (the
// runtime's handler returns into sigpanic, and the panic, recovered or
// not, never comes back to the rest of the block); in any other, those
// whose handler never returned (siglongjmp; a handler that returns
// retries the instruction or skips it, and the activation runs on).
// Every thread that ended in a block of m is one more (another thread's
// exit_group killed it in a loop, a system call of m ended it).
func stopsIn(m *module, fault faultSite) []jump.Stop {
	t := m.plan.Table
	var stops []jump.Stop
	if fault.m == m {
		stops = append(stops, jump.Stop{Addr: fault.addr, Entered: fault.entered})
	}
	for _, e := range fault.threads {
		if e.Image != nil && e.Image.Table == t {
			stops = append(stops, jump.Stop{Addr: e.Addr, Entered: e.Entered})
		}
	}
	goProgram := isGo(m.sym)
	for _, h := range fault.handled {
		if h.Image != nil && h.Image.Table == t && (goProgram || h.Left) {
			stops = append(stops, jump.Stop{Addr: h.Addr, Entered: true})
		}
	}
	return stops
}

// inModule is " in NAME" for a module's note, "" for the program's.
func inModule(name string) string {
	if name == "" {
		return ""
	}
	return " in " + name
}

// addInstances appends to p the own line counts of the functions of
// module m (named name) that share their source lines with others (a C++
// template's instances): their lines in the file of their entry, but
// those whose count the run cannot tell (unknown, by plan line).
func addInstances(p *profile.Profile, m *module, name string, fls []linemodel.FuncLines, unknown []bool) {
	plan := m.plan
	for _, fl := range fls {
		f := plan.Funcs[fl.Func]
		in := profile.Instance{Function: baseObjectName(f.Name, f.Aliases), Address: profile.Address(f.Addr), File: f.File, Line: f.Line, EndLine: f.Line, Module: name}
		for k, i := range fl.Lines {
			l := plan.Lines[i]
			if l.File != f.File || unknown[i] {
				continue
			}
			in.Lines = append(in.Lines, profile.InstanceLine{Line: l.Line, Count: fl.Counts[k], UnexecutedBlock: fl.Unexecuted[k]})
			in.EndLine = max(in.EndLine, l.Line)
		}
		if len(in.Lines) == 0 {
			continue
		}
		sort.Slice(in.Lines, func(a, b int) bool { return in.Lines[a].Line < in.Lines[b].Line })
		// gcov lists an instance down to its closing brace, whose
		// epilogue row is no statement (no count) in a function that
		// returns a value: the function's last row in its file.
		if m.lt != nil {
			sf := m.sym.Funcs[fl.Func]
			for _, r := range m.lt.RowsIn(sf.Addr, sf.Addr+sf.Size) {
				if m.lt.Files[r.File] == f.File {
					in.EndLine = max(in.EndLine, int(r.Line))
				}
			}
		}
		p.Instances = append(p.Instances, in)
	}
}

// baseObjectName returns the name gcov gives a function whose symbols are
// name and aliases: a C++ constructor or destructor whose complete-object
// symbol (C1, D1) is an alias of its base-object one (C2, D2; Itanium C++
// ABI 5.1.4.3) is compiled, and named by GCC's notes, as the latter.
func baseObjectName(name string, aliases []string) string {
	for _, a := range aliases {
		if len(a) != len(name) {
			continue
		}
		diff := -1
		for i := range len(a) {
			if a[i] != name[i] {
				if diff >= 0 {
					diff = -1
					break
				}
				diff = i
			}
		}
		if diff > 0 && name[diff] == '1' && a[diff] == '2' && (name[diff-1] == 'C' || name[diff-1] == 'D') {
			return a
		}
	}
	return name
}
