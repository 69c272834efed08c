package profile

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// An Instance is one of several out-of-line functions compiled from the
// same source lines: the instances of a C++ template (max<int> and
// max<double>), or of a class template's member. Its lines' counts are
// those of its own code; the profile's Lines hold their sum over the
// instances, as gcov's summed line does. The instances of one source are
// told apart as gcov groups functions: by the file and line of their entry
// (Function.Line, the declarator's line), which they share. Inlined copies
// are no instances: they are code inside their caller.
type Instance struct {
	// Function is the ELF symbol name of the instance (mangled).
	Function string `json:"function"`
	// Address is its link-time entry address.
	Address Address `json:"address"`
	// File is the absolute source file of its entry.
	File string `json:"file"`
	// Line is the line of its entry, shared by every instance of the
	// group.
	Line int `json:"line"`
	// EndLine is the last line of its code in File (its closing brace),
	// at least Line: gcov lists an instance from Line to EndLine.
	EndLine int `json:"end_line"`
	// Lines are the counts of its lines with code in File, in line order.
	Lines []InstanceLine `json:"lines"`
	// Module is the path of the module it belongs to; "" is the profile's
	// executable.
	Module string `json:"module,omitempty"`
}

// An InstanceLine is the entry count of one line in one Instance's code.
type InstanceLine struct {
	// Line is the 1-based line number.
	Line int `json:"line"`
	// Count is how many times control entered the line in this instance.
	Count uint64 `json:"count"`
	// UnexecutedBlock is true when one of the instance's basic blocks on
	// the line never ran (gcov's '*').
	UnexecutedBlock bool `json:"unexecuted_block,omitempty"`
}

// Count returns the count of line in the instance, and whether the
// instance has code there.
func (in *Instance) Count(line int) (InstanceLine, bool) {
	i, ok := slices.BinarySearchFunc(in.Lines, line, func(l InstanceLine, n int) int { return cmp.Compare(l.Line, n) })
	if !ok {
		return InstanceLine{}, false
	}
	return in.Lines[i], true
}

// validateInstances checks p.Instances, for Validate: a known module, a
// name, a file, line numbers >= 1 with EndLine >= Line, lines in order
// and each once, and each (module, address) once.
func (p *Profile) validateInstances(modules map[string]bool) error {
	seen := make(map[modAddr]bool, len(p.Instances))
	for i, in := range p.Instances {
		field := "instances[" + strconv.Itoa(i) + "]"
		if err := checkModule(modules, field, in.Module); err != nil {
			return err
		}
		switch {
		case in.Function == "":
			return badField(field+".function", "empty")
		case in.File == "":
			return badField(field+".file", "empty")
		case in.Line < 1:
			return badField(field+".line", "%d: want >= 1", in.Line)
		case in.EndLine < in.Line:
			return badField(field+".end_line", "%d: want >= line %d", in.EndLine, in.Line)
		}
		k := modAddr{in.Module, in.Address}
		if seen[k] {
			return badField(field, "address %s listed twice", in.Address)
		}
		seen[k] = true
		prev := 0
		for j, l := range in.Lines {
			if l.Line <= prev {
				return badField(field+".lines["+strconv.Itoa(j)+"].line", "%d: want > %d (in order, each once)", l.Line, prev)
			}
			prev = l.Line
		}
	}
	return nil
}

// sortInstances puts p.Instances in canonical order: by module, file,
// line, then address.
func (p *Profile) sortInstances() {
	slices.SortStableFunc(p.Instances, func(a, b Instance) int {
		return cmp.Or(strings.Compare(a.Module, b.Module), strings.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line), cmp.Compare(a.Address, b.Address))
	})
}

// mergeInstances adds the instances of p to out, summing the line counts
// of an instance (by module and address) line by line; idx is where each
// instance of out is.
func mergeInstances(out, p *Profile, idx map[modAddr]int, sat *saturator) {
	for _, in := range p.Instances {
		k := modAddr{in.Module, in.Address}
		i, ok := idx[k]
		if !ok {
			idx[k] = len(out.Instances)
			in.Lines = slices.Clone(in.Lines)
			out.Instances = append(out.Instances, in)
			continue
		}
		o := &out.Instances[i]
		o.EndLine = max(o.EndLine, in.EndLine)
		for _, l := range in.Lines {
			j, found := slices.BinarySearchFunc(o.Lines, l.Line, func(x InstanceLine, n int) int { return cmp.Compare(x.Line, n) })
			if !found {
				o.Lines = slices.Insert(o.Lines, j, l)
				continue
			}
			sat.add(&o.Lines[j].Count, l.Count)
		}
	}
}

// cloneInstances returns a deep copy of ins.
func cloneInstances(ins []Instance) []Instance {
	out := slices.Clone(ins)
	for i := range out {
		out[i].Lines = slices.Clone(out[i].Lines)
	}
	return out
}
