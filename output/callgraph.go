package output

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/patchprof/patchprof/profile"
)

// The call graph (--calls): gprof's call graph section, each function with
// the arcs that reach it above (its callers) and the arcs it makes below
// (its callees), and each call site's calls beside its source line.

// UnknownCallers is how the reports name the caller of a function's
// profile.ArcUnknown arc: the calls no counted site accounts for.
const UnknownCallers = "<callers unknown: indirect or uncounted>"

// IndirectCallee is how the reports name the callee of a
// profile.ArcIndirect arc without one: the calls through a pointer whose
// targets are not known.
const IndirectCallee = "<indirect>"

// A funcID is a counted function: its module and entry address.
type funcID struct {
	module string
	addr   profile.Address
}

// callerName is the name an arc's caller is shown under.
func callerName(a profile.Arc) string {
	if a.Kind == profile.ArcUnknown {
		return UnknownCallers
	}
	return a.Caller
}

// calleeName is the name an arc's callee is shown under.
func calleeName(a profile.Arc) string {
	if a.Callee == "" {
		return IndirectCallee
	}
	return a.Callee
}

// A graphRow is the arcs between one caller and one callee from one source
// line of one kind, summed: what the call graph section shows on a line.
type graphRow struct {
	name  string // the other end: the caller above, the callee below
	site  string // the call site's file:line, or its address
	kind  string
	jump  bool // an indirect tail jump's (profile.Arc.Jump)
	count uint64
	sites int // call instructions summed
}

// graphRows sums the arcs that were taken by the function at their other
// end (name), their line and kind, and sorts them by count, then name and site.
func (r *report) graphRows(arcs []profile.Arc, name func(profile.Arc) string) []graphRow {
	type key struct {
		name, site, kind string
		jump             bool
	}
	sums := map[key]*graphRow{}
	var out []*graphRow
	for _, a := range arcs {
		if a.Count == 0 {
			continue // gprof lists the arcs traversed; the site's line says "call f 0"
		}
		site := ""
		switch {
		case a.File != "" && a.Line > 0:
			site = r.display(a.File) + ":" + strconv.Itoa(a.Line)
		case a.Kind != profile.ArcUnknown:
			site = a.Site.String()
		}
		k := key{name(a), site, a.Kind, a.Jump}
		g := sums[k]
		if g == nil {
			g = &graphRow{name: k.name, site: site, kind: a.Kind, jump: a.Jump}
			sums[k] = g
			out = append(out, g)
		}
		g.count = profile.SumCounts(g.count, a.Count)
		g.sites++
	}
	rows := make([]graphRow, len(out))
	for i, g := range out {
		rows[i] = *g
	}
	slices.SortFunc(rows, func(a, b graphRow) int {
		return cmp.Or(cmp.Compare(b.count, a.count), strings.Compare(a.name, b.name), strings.Compare(a.site, b.site))
	})
	return rows
}

// kindNote is what a call graph row says after its site about how the call
// is made; "" for a direct call.
func kindNote(g graphRow) string {
	var parts []string
	switch g.kind {
	case profile.ArcPLT:
		parts = append(parts, "through the PLT")
	case profile.ArcTail:
		parts = append(parts, "tail call: a jump, returns to the caller's caller")
	case profile.ArcIndirect:
		how := "through a pointer"
		if g.jump {
			how = "tail call through a pointer: a jump, returns to the caller's caller"
		}
		if g.name == IndirectCallee {
			how += ": callees not known"
		}
		parts = append(parts, how)
	}
	if g.sites > 1 && g.kind != profile.ArcUnknown {
		parts = append(parts, strconv.Itoa(g.sites)+" call sites")
	}
	if len(parts) == 0 {
		return ""
	}
	return "  (" + strings.Join(parts, "; ") + ")"
}

// callGraph writes the call graph section: every function of funcs that
// was called or calls, in the function table's order, as gprof prints
// it: its callers, then the function with its calls, then its callees.
func (r *report) callGraph(funcs []profile.Function) {
	p := r.p
	if len(p.Arcs) == 0 {
		return
	}
	into := map[funcID][]profile.Arc{}
	from := map[[2]string][]profile.Arc{} // module, caller
	for _, a := range p.Arcs {
		if a.Callee != "" && !a.Outside {
			k := funcID{a.CalleeModule, a.CalleeAddress}
			into[k] = append(into[k], a)
		}
		if a.Kind != profile.ArcUnknown {
			k := [2]string{a.Module, a.Caller}
			from[k] = append(from[k], a)
		}
	}
	funcs = slices.Clone(funcs)
	slices.SortFunc(funcs, func(a, b profile.Function) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Name, b.Name),
			strings.Compare(a.Module, b.Module), cmp.Compare(a.Address, b.Address))
	})
	if r.opt.Top > 0 && len(funcs) > r.opt.Top {
		funcs = funcs[:r.opt.Top]
	}
	r.section()
	r.line(r.paint(sgrBold, "CALL GRAPH (callers above each function, callees below)"))
	cw := len("CALLS")
	for _, f := range funcs {
		cw = max(cw, len(strconv.FormatUint(f.Count, 10)))
	}
	r.line(r.paint(sgrBold, padLeft("CALLS", cw)+"  FUNCTION"))
	wrote := false
	for _, f := range funcs {
		callers, callees := into[funcID{f.Module, f.Address}], from[[2]string{f.Module, f.Name}]
		if f.Count == 0 && len(callers) == 0 && len(callees) == 0 {
			continue
		}
		if wrote {
			r.line(strings.Repeat("=", 40)) // not dashes: a row of them closes a group of instances
		}
		wrote = true
		for _, g := range r.graphRows(callers, callerName) {
			r.line(padLeft(strconv.FormatUint(g.count, 10), cw) + "      " + escapeControl(DisplayName(g.name)) + "  " + g.site + kindNote(g))
		}
		loc := ""
		if f.File != "" && f.Line > 0 {
			loc = "  " + r.display(f.File) + ":" + strconv.Itoa(f.Line)
		}
		if f.Module != "" {
			loc += "  (" + filepath.Base(f.Module) + ")"
		}
		r.line(r.paint(sgrBold, padLeft(strconv.FormatUint(f.Count, 10), cw)+"  "+escapeControl(DisplayName(f.Name))) + loc)
		for _, g := range r.graphRows(callees, calleeName) {
			r.line(padLeft(strconv.FormatUint(g.count, 10), cw) + "      " + escapeControl(DisplayName(g.name)) + "  " + g.site + kindNote(g))
		}
	}
}

// A siteLine is a source line of a module, for the call suffixes.
type siteLine struct {
	module, file string
	line         int
}

// callIndex files p's arcs that have a call site under its source line.
func callIndex(p *profile.Profile) map[siteLine][]profile.Arc {
	if len(p.Arcs) == 0 {
		return nil
	}
	idx := map[siteLine][]profile.Arc{}
	for _, a := range p.Arcs {
		if a.Kind != profile.ArcUnknown && a.File != "" {
			k := siteLine{a.Module, a.File, a.Line}
			idx[k] = append(idx[k], a)
		}
	}
	for _, as := range idx {
		slices.SortFunc(as, func(a, b profile.Arc) int {
			return cmp.Or(cmp.Compare(a.Site, b.Site), strings.Compare(a.Callee, b.Callee))
		})
	}
	return idx
}

// callSuffix is what the listing prints after a call site's source line
// under --calls: each call instruction on it, in address order, with its
// callee and calls, "  [call fib 88, call fib 88]", as gcov -b's "call 0
// returned 88" but naming the callee.
func callSuffix(idx map[siteLine][]profile.Arc, module, file string, line int) string {
	if len(idx) == 0 {
		return "" // without --calls
	}
	as := idx[siteLine{module, file, line}]
	if len(as) == 0 {
		return ""
	}
	parts := make([]string, len(as))
	for i, a := range as {
		verb := "call"
		switch a.Kind {
		case profile.ArcTail:
			verb = "tail call"
		case profile.ArcIndirect:
			verb = "indirect call"
			if a.Jump {
				verb = "indirect tail call"
			}
		}
		name := ""
		if a.Callee != "" {
			name = " " + escapeControl(DisplayName(a.Callee))
		}
		parts[i] = fmt.Sprintf("%s%s %d", verb, name, a.Count)
	}
	return "  [" + strings.Join(parts, ", ") + "]"
}
