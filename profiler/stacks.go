package profiler

import (
	"strconv"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/monitor"
	"github.com/patchprof/patchprof/profile"
	"github.com/patchprof/patchprof/sampler"
	"github.com/patchprof/patchprof/symtab"
)

// A chain is one sampled call chain (--time): its places, the sampled
// address first, then each caller's return address less one, in the
// images the layout in force at the sample mapped them to; and how many
// samples had it.
type chain struct {
	places []placeKey
	// top is the word at the stack pointer as a return address less one,
	// when it is one in a profiled image (hasTop): the caller the
	// frame-pointer chain skips when the sampled function has pushed
	// nothing (topCaller).
	top    placeKey
	hasTop bool
	// out is the sampled address when it lies in a file that is not
	// counted (places[0] is then unused): the chain is kept for its
	// counted callers' inclusive time.
	out *outsidePlace
	n   uint64
}

// chainKey identifies places as a map key: each table's identity (its
// image, by pointer) is stood for by the order tables were first seen in.
func (tl *timeline) chainKey(places []placeKey) string {
	var b strings.Builder
	for _, pk := range places {
		id, ok := tl.tabIDs[pk.tab]
		if !ok {
			id = len(tl.tabIDs)
			tl.tabIDs[pk.tab] = id
		}
		b.WriteString(strconv.Itoa(id))
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(pk.addr, 16))
		b.WriteByte(' ')
	}
	return b.String()
}

// addChain counts a sample at leaf whose thread's return addresses were
// callers (runtime addresses, innermost first; the sampler's
// Sample.Callers), mapped through layout l. A return address in no
// profiled image (the C library's) is left out: its frames are not
// counted code. Called with tl.mu held.
func (tl *timeline) addChain(l *monitor.Layout, leaf placeKey, callers []uint64, top uint64) {
	places := make([]placeKey, 1, 2+len(callers))
	places[0] = leaf
	for _, ra := range callers {
		if pk, ok := returnPlace(l, ra); ok {
			places = append(places, pk)
		}
	}
	topPlace, hasTop := returnPlace(l, top)
	k := tl.chainKey(places)
	if hasTop {
		k += "top " + tl.chainKey([]placeKey{topPlace})
	}
	c := tl.chains[k]
	if c == nil {
		c = &chain{places: places, top: topPlace, hasTop: hasTop}
		tl.chains[k] = c
	}
	c.n++
}

// addOutsideChain counts a sample at op, in a file that is not counted,
// whose callers are walked by CFI where the files have it and else the
// kernel's frame-pointer chain; a chain with no caller in a profiled
// image is not kept (its time is outside, and nothing counted is under
// it). Called with tl.mu held.
func (tl *timeline) addOutsideChain(l *monitor.Layout, op outsidePlace, s *sampler.Sample) {
	ras, ok := tl.walk(l, s)
	if !ok {
		ras = s.Callers
	}
	places := make([]placeKey, 1, 1+len(ras))
	for _, ra := range ras {
		if pk, ok := returnPlace(l, ra); ok {
			places = append(places, pk)
		}
	}
	if len(places) == 1 {
		return
	}
	k := "out " + op.path + " " + strconv.FormatUint(op.addr, 16) + " " + tl.chainKey(places[1:])
	c := tl.chains[k]
	if c == nil {
		c = &chain{places: places, out: &op}
		tl.chains[k] = c
	}
	c.n++
}

// returnPlace maps return address ra (runtime) through layout l to its
// call's place: the address before it, in a profiled image; false when it
// is in none (or 0).
func returnPlace(l *monitor.Layout, ra uint64) (placeKey, bool) {
	if ra == 0 {
		return placeKey{}, false
	}
	pc := l.Original(ra)
	mp, ok := l.Find(pc - 1)
	if !ok {
		return placeKey{}, false
	}
	return placeKey{mp.Image.Table, pc - 1 - mp.Bias}, true
}

// addStacks adds the sampled chains to p (Profile.Stacks), each frame
// named by its module's symbols and line table; a frame in a module not
// counted (mods, names: as in addTime) is left out, and a chain whose
// sampled address is in one is not listed, as its sample is outside; a
// chain sampled in a file that is not counted at all (addOutsideChain)
// keeps that frame, marked Outside, when a caller of it is counted.
func (tl *timeline) addStacks(p *profile.Profile, mods map[*breakpoint.Table]*module, names map[*module]string) {
	merged := map[string]int{} // two chains may differ only in frames left out
	for _, c := range tl.chains {
		var frames []profile.Frame
		var key strings.Builder
		places := c.places
		switch {
		case c.out != nil:
			frames = append(frames, profile.Frame{Address: profile.Address(c.out.addr), Module: c.out.path, Function: c.out.name, Outside: true})
			key.WriteString("\x01" + c.out.path + "\x00" + strconv.FormatUint(c.out.addr, 16) + "\x00")
			places = places[1:]
		case mods[c.places[0].tab] == nil:
			continue
		case c.hasTop && mods[c.top.tab] != nil && mods[c.places[0].tab].topCaller(c.places[0].addr):
			places = append([]placeKey{places[0], c.top}, places[1:]...)
		}
		for _, pk := range places {
			m := mods[pk.tab]
			if m == nil {
				continue
			}
			f := profile.Frame{Address: profile.Address(pk.addr), Module: names[m]}
			if i, ok := m.sym.FuncAt(pk.addr); ok {
				f.Function = m.sym.Funcs[i].Name
			} else {
				f.Function = m.pltName(pk.addr)
			}
			if m.lt != nil {
				if file, line, ok := m.lt.Lookup(pk.addr); ok {
					f.File, f.Line = file, line
				}
			}
			frames = append(frames, f)
			key.WriteString(f.Module + "\x00" + strconv.FormatUint(pk.addr, 16) + "\x00")
		}
		if len(frames) == 1 && c.out != nil {
			continue // no caller counted (a library that is not counted since)
		}
		if i, ok := merged[key.String()]; ok {
			p.Stacks[i].Samples += c.n
			p.Stacks[i].TimeNS += c.n * tl.period
			continue
		}
		merged[key.String()] = len(p.Stacks)
		p.Stacks = append(p.Stacks, profile.Stack{Frames: frames, Samples: c.n, TimeNS: c.n * tl.period})
	}
}

// pltName names the PLT stub of m that holds link-time address addr as
// perf does ("random_r@plt"), "" when none is known to: a stub is named
// at its start and at its jump (cfg.ELFImage.PLTName), and a stub is 8
// or 16 bytes.
func (m *module) pltName(addr uint64) string {
	name := m.callee
	if name == nil {
		if m.plt == nil {
			m.plt = func(uint64) string { return "" }
			if _, im, err := readImage(m.sym.Path); err == nil {
				m.plt = im.PLTName
			}
		}
		name = m.plt
	}
	for _, a := range []uint64{addr, addr &^ 15, addr &^ 7} {
		if _, ok := m.sym.FuncAt(a); ok {
			continue
		}
		if name := name(a); name != "" {
			return name + "@plt"
		}
	}
	return ""
}

// topCaller reports whether, at link-time address addr of module m, the
// word at the stack pointer is the return address of the function
// holding addr, and the frame pointer still its caller's: at the
// function's entry, at a ret, or anywhere in a function that moves the
// stack pointer nowhere (a leaf without a frame, as compilers make them
// even when they keep frame pointers). The kernel's frame-pointer chain
// skips that caller; the sampled stack's top word is it.
func (m *module) topCaller(addr uint64) bool {
	i, ok := m.sym.FuncAt(addr)
	if !ok {
		// A PLT stub's jump runs with the caller's return address at
		// the stack pointer.
		return m.pltName(addr) != ""
	}
	f := m.sym.Funcs[i]
	if addr == f.Addr {
		return true
	}
	if code, ok := m.sym.Code(addr, 16); ok {
		if inst, err := symtab.DecodeInst(code); err == nil && inst.Op == x86asm.RET {
			return true
		}
	}
	if m.pushless == nil {
		m.pushless = map[int]bool{}
	}
	still, ok := m.pushless[i]
	if !ok {
		still = m.movesNoStack(f.Addr, f.Addr+f.Size)
		m.pushless[i] = still
	}
	return still
}

// movesNoStack reports whether the code in [lo, hi) of m decodes whole and
// no instruction of it but ret moves the stack pointer.
func (m *module) movesNoStack(lo, hi uint64) bool {
	for pc := lo; pc < hi; {
		code, ok := m.sym.Code(pc, int(min(hi-pc, 16)))
		if !ok {
			return false
		}
		inst, err := symtab.DecodeInst(code)
		if err != nil || inst.Len == 0 {
			return false
		}
		pc += uint64(inst.Len)
		if inst.Op == x86asm.RET {
			continue
		}
		if dst, _ := inst.Args[0].(x86asm.Reg); dst == x86asm.RSP || dst == x86asm.ESP || breakpoint.WritesRSP(inst.Op) {
			return false
		}
	}
	return true
}
