package profile

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A Stack is one sampled call chain (--time) and the CPU time sampled in
// it: where the thread was (Frames[0], a sampled address) and the calls it
// was in, innermost first, walked by the code's call frame information
// where it has it and by frame pointers elsewhere (docs/profile-format.md).
// Frames in modules that are not counted are left out, but for the
// sampled address (Frame.Outside): time spent in a library's function,
// such as the C library's strlen, stays under the counted code that
// called it. pprof's inclusive (cum) time is read from them.
type Stack struct {
	// Frames are the sampled address, then each caller's return address
	// less one (an address inside its call instruction, so its line is
	// the call's).
	Frames []Frame `json:"frames"`
	// Samples is the number of samples of this chain, TimeNS their CPU
	// time.
	Samples uint64 `json:"samples"`
	TimeNS  uint64 `json:"time_ns"`
}

// A Frame is one address of a Stack: a link-time address in Module, with
// the function and source line that hold it when known.
type Frame struct {
	Address  Address `json:"address"`
	Module   string  `json:"module,omitempty"`
	Function string  `json:"function,omitempty"`
	File     string  `json:"file,omitempty"`
	Line     int     `json:"line,omitempty"`
	// Outside says the frame is in a file that was not counted: Module
	// is then that file's path (not one of the profile's modules),
	// Address a link-time address in it, and Function the ELF symbol
	// that holds it, when one does.
	Outside bool `json:"outside,omitempty"`
}

// key identifies a stack by its frames' modules and addresses.
func (s Stack) key() string {
	var b strings.Builder
	for _, f := range s.Frames {
		if f.Outside {
			b.WriteByte(1)
		}
		b.WriteString(f.Module)
		b.WriteByte(0)
		b.WriteString(strconv.FormatUint(uint64(f.Address), 16))
		b.WriteByte(0)
	}
	return b.String()
}

// sortStacks puts the stacks in canonical order: by their frames, module
// and address, innermost first.
func (p *Profile) sortStacks() {
	slices.SortStableFunc(p.Stacks, func(a, b Stack) int {
		for k := 0; k < len(a.Frames) && k < len(b.Frames); k++ {
			x, y := a.Frames[k], b.Frames[k]
			if c := cmp.Or(cmpBool(x.Outside, y.Outside), strings.Compare(x.Module, y.Module), cmp.Compare(x.Address, y.Address)); c != 0 {
				return c
			}
		}
		return cmp.Compare(len(a.Frames), len(b.Frames))
	})
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// validateStacks checks the sampled chains: at least one frame each, in
// known modules, no chain twice, and time to go with them.
func (p *Profile) validateStacks(modules map[string]bool) error {
	seen := make(map[string]bool, len(p.Stacks))
	for i, s := range p.Stacks {
		field := "stacks[" + strconv.Itoa(i) + "]"
		if len(s.Frames) == 0 {
			return &FormatError{Field: field + ".frames", Msg: "no frame"}
		}
		for k, f := range s.Frames {
			if f.Outside && f.Module == "" {
				return &FormatError{Field: fmt.Sprintf("%s.frames[%d].module", field, k), Msg: "a frame outside the counted modules names no file"}
			}
			if !f.Outside && !modules[f.Module] {
				return &FormatError{Field: fmt.Sprintf("%s.frames[%d].module", field, k), Msg: fmt.Sprintf("%q is not in modules", f.Module)}
			}
		}
		k := s.key()
		if seen[k] {
			return &FormatError{Field: field, Msg: "call chain listed twice"}
		}
		seen[k] = true
	}
	if len(p.Stacks) > 0 && p.Time == nil {
		return &FormatError{Field: "stacks", Msg: "sampled call chains without time"}
	}
	return nil
}

// mergeStacks adds the sampled chains of p to out's (Merge), summed by
// chain.
func mergeStacks(out, p *Profile, sat *saturator) {
	if len(p.Stacks) == 0 {
		return
	}
	idx := make(map[string]int, len(out.Stacks))
	for i, s := range out.Stacks {
		idx[s.key()] = i
	}
	for _, s := range p.Stacks {
		k := s.key()
		if i, ok := idx[k]; ok {
			sat.add(&out.Stacks[i].Samples, s.Samples)
			sat.add(&out.Stacks[i].TimeNS, s.TimeNS)
			continue
		}
		idx[k] = len(out.Stacks)
		s.Frames = slices.Clone(s.Frames)
		out.Stacks = append(out.Stacks, s)
	}
}

// cloneStacks copies stacks, frames included.
func cloneStacks(stacks []Stack) []Stack {
	out := slices.Clone(stacks)
	for i := range out {
		out[i].Frames = slices.Clone(out[i].Frames)
	}
	return out
}
