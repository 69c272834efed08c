package main

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/lineinfo"
	"github.com/patchprof/patchprof/monitor"
	"github.com/patchprof/patchprof/profile"
	"github.com/patchprof/patchprof/symtab"
)

// buildProfile resolves the monitor's counts to files, lines and functions.
func buildProfile(sym *symtab.File, lt *lineinfo.Table, plan *breakpoint.Plan, res *monitor.Result, mode string, args []string) *profile.Profile {
	t := plan.Table
	p := &profile.Profile{
		Version:    profile.Version,
		Executable: sym.Path,
		BuildID:    sym.BuildID,
		Args:       args,
		Mode:       mode,
		Lines:      []profile.Line{},
		Functions:  []profile.Function{},
		Sites:      []profile.Site{},
	}
	if mode != profile.ModeFuncs {
		for i, l := range plan.Lines {
			p.Lines = append(p.Lines, profile.Line{File: l.File, Line: l.Line, Count: t.LineEntries[i]})
		}
		reasons := map[string]int{}
		for _, d := range plan.Dropped {
			p.Dropped = append(p.Dropped, profile.Dropped{Address: profile.FormatAddress(d.Addr), File: d.File, Line: d.Line, Reason: d.Reason})
			reasons[d.Reason]++
		}
		var keys []string
		for k := range reasons {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p.Notes = append(p.Notes, fmt.Sprintf("%d line-table rows not planted: %s", reasons[k], k))
		}
	}
	if mode != profile.ModeLines {
		for _, f := range plan.Funcs {
			if !f.Planted {
				continue
			}
			i, ok := t.Index(f.Site)
			if !ok {
				continue
			}
			p.Functions = append(p.Functions, profile.Function{Name: f.Name, Count: t.Hits[i], File: f.File, Line: f.Line, Address: profile.FormatAddress(f.Addr)})
		}
	}
	for i := 0; i < t.Len(); i++ {
		p.Sites = append(p.Sites, profile.Site{Address: profile.FormatAddress(t.Addr(i)), Count: t.Hits[i], Kind: t.Kind(i).String()})
	}
	p.Exit = exitOf(sym, lt, res)
	p.Sort()
	return p
}

// exitOf describes how the target ended; for a death by signal, where: the
// faulting thread's PC, or, when that lies outside the executable (in libc's
// abort, say), the innermost return address on its stack that does.
func exitOf(sym *symtab.File, lt *lineinfo.Table, res *monitor.Result) profile.Exit {
	e := res.Exit
	if e.Detached {
		return profile.Exit{Detached: true}
	}
	if e.Signal == 0 {
		code := e.Code
		return profile.Exit{Code: &code}
	}
	x := profile.Exit{Signal: profile.SignalName(e.Signal)}
	f := e.Fault
	if f == nil {
		return x
	}
	switch e.Signal {
	case 11, 7, 4, 8: // SIGSEGV, SIGBUS, SIGILL, SIGFPE
		x.FaultAddress = profile.FormatAddress(f.Addr)
	}
	bias := res.Bias
	pc := f.PC - bias
	where := uint64(0)
	if _, ok := sym.FuncAt(pc); ok {
		where = pc
		x.PC = profile.FormatAddress(pc)
	} else {
		x.PC = profile.FormatAddress(f.PC)
		for k := 0; k+8 <= len(f.Stack); k += 8 {
			ra := binary.LittleEndian.Uint64(f.Stack[k:]) - bias
			if _, ok := sym.FuncAt(ra); ok && sym.IsReturnAddress(ra) {
				where = ra - 1 // inside the call instruction, on its line
				break
			}
		}
	}
	if where == 0 {
		return x
	}
	if i, ok := sym.FuncAt(where); ok {
		x.Function = sym.Funcs[i].Name
	}
	if lt != nil {
		if file, line, ok := lt.Lookup(where); ok {
			x.File, x.Line = file, line
		}
	}
	return x
}
