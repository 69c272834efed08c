package output

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/patchprof/patchprof/profile"
)

// The instances of a C++ template (profile.Instance), grouped as gcov
// groups functions: those whose entries share a line of one file. gcov
// prints a group's summed lines, then each instance's lines apart between
// "------------------" rules; the exports and the listing (--instances) do
// the same.

// An instanceGroup is the instances of one source: two or more functions
// whose entries are on line of one file, in gcov's order.
type instanceGroup struct {
	line int // their entry line
	end  int // the last line of any of them
	// insts are by entry address, highest first: gcov lists a group in
	// the order of GCC's notes file, which g++ writes (observed with GCC
	// 12 at -O0) in the reverse of the order it lays out their code.
	insts []profile.Instance
}

// instanceGroups groups the instances of one file, whatever their module,
// by entry line, in line order; an entry line with only one instance
// makes no group. Instances of one name from several modules are summed
// line by line.
func instanceGroups(ins []profile.Instance) []instanceGroup {
	byLine := make(map[int][]profile.Instance)
	type key struct {
		name string
		line int
	}
	at := make(map[key]int) // index in byLine[line]
	for _, in := range ins {
		key := key{in.Function, in.Line}
		if i, ok := at[key]; ok {
			g := &byLine[in.Line][i]
			g.EndLine = max(g.EndLine, in.EndLine)
			g.Address = min(g.Address, in.Address) // keep the order independent of the profile's
			g.Lines = sumInstanceLines(g.Lines, in.Lines)
			continue
		}
		at[key] = len(byLine[in.Line])
		in.Lines = slices.Clone(in.Lines)
		in.Module = ""
		byLine[in.Line] = append(byLine[in.Line], in)
	}
	var out []instanceGroup
	for line, list := range byLine {
		if len(list) < 2 {
			continue
		}
		g := instanceGroup{line: line, end: line, insts: list}
		slices.SortFunc(g.insts, func(a, b profile.Instance) int {
			return cmp.Or(cmp.Compare(b.Address, a.Address), strings.Compare(a.Function, b.Function))
		})
		for _, in := range g.insts {
			g.end = max(g.end, in.EndLine)
		}
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b instanceGroup) int { return cmp.Compare(a.line, b.line) })
	return out
}

// sumInstanceLines returns the lines of a and b, counts summed by line.
func sumInstanceLines(a, b []profile.InstanceLine) []profile.InstanceLine {
	for _, l := range b {
		i, ok := slices.BinarySearchFunc(a, l.Line, func(x profile.InstanceLine, n int) int { return cmp.Compare(x.Line, n) })
		if !ok {
			a = slices.Insert(a, i, l)
			continue
		}
		a[i].Count = profile.SumCounts(a[i].Count, l.Count)
		a[i].UnexecutedBlock = a[i].UnexecutedBlock || l.UnexecutedBlock
	}
	return a
}

// attachInstances gives each export file its instance groups.
func attachInstances(p *profile.Profile, files map[string]*exportFile) {
	byFile := make(map[string][]profile.Instance)
	for _, in := range p.Instances {
		byFile[in.File] = append(byFile[in.File], in)
	}
	for name, ins := range byFile {
		if f := files[name]; f != nil {
			f.groups = instanceGroups(ins)
		}
	}
}

// groupAt returns the group whose lines hold line, if any.
func groupAt(groups []instanceGroup, line int) (*instanceGroup, bool) {
	for i := range groups {
		if g := &groups[i]; line >= g.line && line <= g.end {
			return g, true
		}
	}
	return nil, false
}

// owner returns the index of the instance of g whose code holds addr, at
// a line of the group: the instance with the highest entry at or below
// addr; -1 when addr lies below them all.
func (g *instanceGroup) owner(line int, addr profile.Address) int {
	if line < g.line || line > g.end {
		return -1
	}
	best := -1
	for i, in := range g.insts {
		if in.Address <= addr && (best < 0 || in.Address > g.insts[best].Address) {
			best = i
		}
	}
	return best
}

// inGroup reports whether function fn is one of the instances of a group
// of groups (by its entry address and line).
func inGroup(groups []instanceGroup, fn profile.Function) bool {
	_, ok := instanceOf(groups, fn)
	return ok
}

// splitArcs returns the calls and branches of one line that belong to no
// instance of groups, and those of instance k of the group holding the
// line, for each k.
func splitArcs(groups []instanceGroup, line int, calls []profile.Call, bs []profile.Branch) (restCalls []profile.Call, restBranches []profile.Branch, instCalls map[int][]profile.Call, instBranches map[int][]profile.Branch) {
	g, ok := groupAt(groups, line)
	if !ok {
		return calls, bs, nil, nil
	}
	instCalls, instBranches = map[int][]profile.Call{}, map[int][]profile.Branch{}
	for _, c := range calls {
		if k := g.owner(line, c.Address); k >= 0 {
			instCalls[k] = append(instCalls[k], c)
		} else {
			restCalls = append(restCalls, c)
		}
	}
	for _, b := range bs {
		if k := g.owner(line, b.Address); k >= 0 {
			instBranches[k] = append(instBranches[k], b)
		} else {
			restBranches = append(restBranches, b)
		}
	}
	return restCalls, restBranches, instCalls, instBranches
}

// has reports whether an instance of g has code on line.
func (g *instanceGroup) has(line int) bool {
	for i := range g.insts {
		if _, ok := g.insts[i].Count(line); ok {
			return true
		}
	}
	return false
}

// instanceOf returns the instance of groups that is function fn.
func instanceOf(groups []instanceGroup, fn profile.Function) (profile.Instance, bool) {
	for _, g := range groups {
		if fn.Line != g.line {
			continue
		}
		for _, in := range g.insts {
			if in.Address == fn.Address {
				return in, true
			}
		}
	}
	return profile.Instance{}, false
}

// listingGroups returns the instance groups of the files of lines (one
// module's), by file; with Options.Instances off, none, and a note when
// the listing sums some.
func (r *report) listingGroups(lines []profile.Line) map[string][]instanceGroup {
	if len(r.p.Instances) == 0 || len(lines) == 0 {
		return nil
	}
	module := lines[0].Module
	byFile := make(map[string][]profile.Instance)
	for _, in := range r.p.Instances {
		if in.Module == module {
			byFile[in.File] = append(byFile[in.File], in)
		}
	}
	out := make(map[string][]instanceGroup, len(byFile))
	n := 0
	for file, ins := range byFile {
		out[file] = instanceGroups(ins)
		for _, g := range out[file] {
			n += len(g.insts)
		}
	}
	if n == 0 {
		return nil
	}
	if !r.opt.Instances {
		r.extra = append(r.extra, fmt.Sprintf("the counts of %d template instances are summed on the lines they share: --instances shows each apart", n))
		return nil
	}
	return out
}

// instanceRows appends to rows, after the row of line, the instances of
// the group of groups that ends there (--instances): as gcov -m shows
// them, for each a "------------------" rule and its demangled name, then
// its own count of each line from its entry to its end; one more rule
// closes the group, and the branches of an instance (--blocks) are on its
// rows, not on the summed ones (ownBranches). path is the file, file its
// name as the listing shows it, src its source.
func (r *report) instanceRows(rows []row, groups []instanceGroup, branches map[branchKey][]profile.Branch, path, file string, line int, src []string) []row {
	const rule = "------------------"
	for gi := range groups {
		g := &groups[gi]
		if g.end != line {
			continue
		}
		for k, in := range g.insts {
			rows = append(rows, row{file: file, title: rule}, row{file: file, title: escapeControl(DisplayName(in.Function)) + ":"})
			for l := in.Line; l <= in.EndLine; l++ {
				rw := row{file: file, line: l}
				if l <= len(src) {
					rw.source = src[l-1]
				}
				var own []profile.Branch
				for _, b := range branches[branchKey{path, l}] {
					if g.owner(l, b.Address) == k {
						own = append(own, b)
					}
				}
				rw.source += branchSuffix(map[branchKey][]profile.Branch{{path, l}: own}, path, l)
				if c, ok := in.Count(l); ok {
					rw.count, rw.n = r.countCell(c.Count, r.maxCount), c.Count
				}
				rows = append(rows, rw)
			}
		}
		rows = append(rows, row{file: file, title: rule})
	}
	return rows
}

// ownBranches returns the branch index idx without the branches of the
// instances of groups (by file), which the listing shows on the
// instances' rows; idx itself when there are no groups.
func ownBranches(idx map[branchKey][]profile.Branch, groups map[string][]instanceGroup) map[branchKey][]profile.Branch {
	if len(groups) == 0 || len(idx) == 0 {
		return idx
	}
	out := make(map[branchKey][]profile.Branch, len(idx))
	for k, bs := range idx {
		g, ok := groupAt(groups[k.file], k.line)
		if !ok {
			out[k] = bs
			continue
		}
		for _, b := range bs {
			if g.owner(k.line, b.Address) < 0 {
				out[k] = append(out[k], b)
			}
		}
	}
	return out
}
