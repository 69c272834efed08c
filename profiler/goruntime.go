package profiler

import (
	"debug/dwarf"
	"debug/elf"

	"github.com/patchprof/patchprof/monitor"
	"github.com/patchprof/patchprof/symtab"
)

// What the monitor reads in a Go program's runtime to attach to it without
// system-call stops (monitor.GoRuntime): the room after asyncPreempt's
// return, for a gate, and where each thread's signal stack is recorded,
// for the exact test of a thread inside a signal handler.

// Names in the Go runtime's symbols and debugging information.
const (
	goAllM  = "runtime.allm"  // *m, the head of every M's list
	goIsCgo = "runtime.iscgo" // bool, set in a program that links cgo
	goMType = "runtime.m"
	goGType = "runtime.g"
	goStack = "runtime.stack"
)

// goRuntime returns what the monitor needs of the executable's Go runtime
// for an attach under the in-process engine (the only run that uses it),
// else nil.
func (p *Profiler) goRuntime() *monitor.GoRuntime {
	if p.target.Attach == 0 || !p.sel.jump || !isGo(p.root.sym) {
		return nil
	}
	return goRuntimeOf(p.root.sym)
}

// goRuntimeOf returns what the monitor needs of the Go runtime of the
// executable sym, or nil when sym is no Go program the in-process engine
// serves. A field it cannot find stays 0, which the monitor reads as
// unknown (it then keeps the system-call stops).
func goRuntimeOf(sym *symtab.File) *monitor.GoRuntime {
	resume := goResumePoints(sym)
	if len(resume) != 1 {
		return nil
	}
	g := &monitor.GoRuntime{ResumeRoom: goResumeRoom(sym, resume[0])}
	ef, err := elf.Open(sym.Path)
	if err != nil {
		return g
	}
	defer ef.Close()
	syms, err := ef.Symbols()
	if err != nil {
		return g
	}
	for _, s := range syms {
		switch s.Name {
		case goAllM:
			g.AllM = s.Value
		case goIsCgo:
			g.IsCgo = s.Value
		}
	}
	if d, err := ef.DWARF(); err == nil {
		goOffsets(d, g)
	}
	return g
}

// goResumeRoom returns how many bytes from the Resume site at ret to the
// next function: the ret and the padding after it, which a gate's patch
// may cover.
func goResumeRoom(sym *symtab.File, ret uint64) uint64 {
	k, ok := sym.FuncAt(ret)
	if !ok || k+1 >= len(sym.Funcs) || sym.Funcs[k+1].Addr <= ret {
		return 1
	}
	return sym.Funcs[k+1].Addr - ret
}

// goOffsets fills g's field offsets from the debugging information d: the
// m's procid, gsignal, alllink and isextra, and the g's stack bounds. It
// sets g.Offsets when it found all but isextra (g.IsExtraKnown).
func goOffsets(d *dwarf.Data, g *monitor.GoRuntime) {
	found := 0
	defer func() { g.Offsets = found == 6 }()
	want := map[string]map[string]*uint64{
		goMType: {"procid": &g.MProcID, "gsignal": &g.MGSignal, "alllink": &g.MAllLink, "isextra": &g.MIsExtra},
		goGType: {"stack": &g.GStack},
		goStack: {"lo": &g.StackLo, "hi": &g.StackHi},
	}
	r := d.Reader()
	for len(want) > 0 {
		e, err := r.Next()
		if err != nil || e == nil {
			return
		}
		if e.Tag != dwarf.TagStructType {
			if e.Tag != dwarf.TagCompileUnit && e.Children {
				r.SkipChildren()
			}
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		fields, ok := want[name]
		if !ok || !e.Children {
			if e.Children {
				r.SkipChildren()
			}
			continue
		}
		delete(want, name)
		for {
			c, err := r.Next()
			if err != nil || c == nil || c.Tag == 0 {
				break
			}
			fname, _ := c.Val(dwarf.AttrName).(string)
			off, ok := c.Val(dwarf.AttrDataMemberLoc).(int64)
			if p := fields[fname]; p != nil && ok && c.Tag == dwarf.TagMember {
				*p = uint64(off)
				if p == &g.MIsExtra {
					g.IsExtraKnown = true
				} else {
					found++
				}
			}
			if c.Children {
				r.SkipChildren()
			}
		}
	}
}
