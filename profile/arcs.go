package profile

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// The values of Arc.Kind: how the caller reaches the callee.
const (
	// ArcDirect is a `call rel32` to the entry of a function of the same
	// module (recursion included: Caller equals Callee).
	ArcDirect = "direct"
	// ArcPLT is a `call rel32` to a PLT stub, or with -fno-plt a `call
	// *foo@GOTPCREL(%rip)` through the GOT slot the stub would read: the
	// callee is the function the slot binds, in another module.
	ArcPLT = "plt"
	// ArcTail is a jump (jmp or jcc) to another function's entry or PLT
	// stub: a tail call, which the callee returns from to the caller's
	// own caller.
	ArcTail = "tail"
	// ArcIndirect is a call (or a jump that leaves the function) through
	// a register or memory. With a Callee, Count is how often the site
	// entered it, as the trap engines see at the callee's entry; without,
	// it is the site's other calls, whose targets are not known (all of
	// them under the in-process engine).
	ArcIndirect = "indirect"
	// ArcUnknown is the rest of a function's entries that no counted
	// call site accounts for: calls through pointers, calls from code
	// that was not counted (the C library calling main or a qsort
	// comparator), signal handlers. Caller and Site are empty.
	ArcUnknown = "unknown"
)

// An Arc is how often one call site called one function (--calls): gprof's
// and callgrind's call arc, exact. The arcs of a profile account for every
// entry of every counted function: the counted call sites that reach it,
// then one ArcUnknown arc for the rest.
type Arc struct {
	// Caller is the symbol name of the function holding the call site;
	// "" for ArcUnknown.
	Caller string `json:"caller,omitempty"`
	// Site is the link-time address of the call or jump instruction in
	// Module; 0 (left out) for ArcUnknown.
	Site Address `json:"site,omitempty"`
	// File and Line are the source line of the call site, when DWARF
	// knows it.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Callee is the symbol name of the function called; "" for the calls
	// of an ArcIndirect site whose targets are not known.
	Callee string `json:"callee,omitempty"`
	// CalleeAddress is the callee's link-time entry address in
	// CalleeModule; 0 when the callee lies outside the counted modules
	// (Outside) or is not known (ArcIndirect).
	CalleeAddress Address `json:"callee_address,omitempty"`
	// CalleeModule is the path of the module holding the callee; "" is
	// the profile's executable.
	CalleeModule string `json:"callee_module,omitempty"`
	// Outside is true when the callee is in a module that was not
	// counted (the C library): it is known by name only.
	Outside bool `json:"outside,omitempty"`
	// Count is how many times the site called the callee.
	Count uint64 `json:"count"`
	// Kind is ArcDirect, ArcPLT, ArcTail, ArcIndirect or ArcUnknown.
	Kind string `json:"kind"`
	// Jump, for an ArcIndirect arc, says the site is a jump through a
	// register or memory that leaves its function (a tail call: the
	// callee returns to the caller's caller), not a call.
	Jump bool `json:"jump,omitempty"`
	// Module is the path of the module holding the call site (for
	// ArcUnknown, the callee's); "" is the profile's executable.
	Module string `json:"module,omitempty"`
}

// arcKey identifies an arc for Merge and Validate: one per site and
// callee, and one ArcUnknown arc per callee.
type arcKey struct {
	module       string
	site         Address
	kind         string
	calleeModule string
	callee       string
	calleeAddr   Address
}

func (a Arc) key() arcKey {
	return arcKey{a.Module, a.Site, a.Kind, a.CalleeModule, a.Callee, a.CalleeAddress}
}

// validateArcs checks p.Arcs (see docs/profile-format.md, "arcs").
func (p *Profile) validateArcs(modules map[string]bool) error {
	seen := make(map[arcKey]bool, len(p.Arcs))
	for i, a := range p.Arcs {
		field := "arcs[" + strconv.Itoa(i) + "]"
		if !modules[a.Module] {
			return badField(field+".module", "%q is not in modules", a.Module)
		}
		if !modules[a.CalleeModule] {
			return badField(field+".callee_module", "%q is not in modules", a.CalleeModule)
		}
		if a.Line < 0 || (a.Line > 0 && a.File == "") {
			return badField(field+".line", "%d: want >= 1 with a file, or no line", a.Line)
		}
		switch a.Kind {
		case ArcDirect, ArcPLT, ArcTail:
			if a.Caller == "" || a.Callee == "" {
				return badField(field, "a %s arc needs a caller and a callee", a.Kind)
			}
		case ArcIndirect:
			if a.Caller == "" || (a.Callee == "" && (a.CalleeAddress != 0 || a.Outside)) {
				return badField(field, "an indirect arc has a caller, and a callee only with its name")
			}
		case ArcUnknown:
			if a.Caller != "" || a.Site != 0 || a.Callee == "" || a.Outside {
				return badField(field, "an unknown arc has a counted callee and no caller or site")
			}
		default:
			return badField(field+".kind", "%q: want %s, %s, %s, %s or %s", a.Kind, ArcDirect, ArcPLT, ArcTail, ArcIndirect, ArcUnknown)
		}
		if a.Outside && (a.CalleeAddress != 0 || a.CalleeModule != "") {
			return badField(field+".outside", "a callee outside the counted modules has no address or module")
		}
		if seen[a.key()] {
			return badField(field, "the arc from %s at %s to %q is listed twice", a.Caller, a.Site, a.Callee)
		}
		seen[a.key()] = true
	}
	return nil
}

// sortArcs puts the arcs in canonical order: by module, site, then callee
// (the unknown arcs, without a site, first).
func (p *Profile) sortArcs() {
	slices.SortStableFunc(p.Arcs, func(a, b Arc) int {
		return cmp.Or(strings.Compare(a.Module, b.Module), cmp.Compare(a.Site, b.Site), strings.Compare(a.Kind, b.Kind),
			strings.Compare(a.CalleeModule, b.CalleeModule), cmp.Compare(a.CalleeAddress, b.CalleeAddress),
			strings.Compare(a.Callee, b.Callee))
	})
}

// mergeArcs adds the arcs of p to out's, by site and callee.
func mergeArcs(out, p *Profile, index map[arcKey]int, sat *saturator) {
	for _, a := range p.Arcs {
		k := a.key()
		if i, ok := index[k]; ok {
			sat.add(&out.Arcs[i].Count, a.Count)
			continue
		}
		index[k] = len(out.Arcs)
		out.Arcs = append(out.Arcs, a)
	}
}

// SetUnknownArcs replaces p's ArcUnknown arcs with one per counted
// function whose entries the other arcs do not all account for: its count
// less the calls of the arcs that reach it. A profile without arcs is
// left alone. The profiler calls it once every module's arcs are in;
// Merge again on the sums, so that a merged input without arcs leaves its
// calls among the unknown ones rather than lost.
func (p *Profile) SetUnknownArcs() {
	if len(p.Arcs) == 0 {
		return
	}
	p.Arcs = slices.DeleteFunc(p.Arcs, func(a Arc) bool { return a.Kind == ArcUnknown })
	known := make(map[modAddr]uint64)
	for _, a := range p.Arcs {
		if a.Callee != "" && !a.Outside {
			k := modAddr{a.CalleeModule, a.CalleeAddress}
			known[k] = SumCounts(known[k], a.Count)
		}
	}
	for _, f := range p.Functions {
		k := known[modAddr{f.Module, f.Address}]
		if f.Count <= k {
			continue
		}
		p.Arcs = append(p.Arcs, Arc{Callee: f.Name, CalleeAddress: f.Address, CalleeModule: f.Module,
			Count: f.Count - k, Kind: ArcUnknown, Module: f.Module})
	}
}
