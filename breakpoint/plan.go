package breakpoint

import (
	"sort"

	"github.com/patchprof/patchprof/lineinfo"
	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
)

// PlanOptions selects what to plant.
type PlanOptions struct {
	Lines bool // plant at line-table rows
	Funcs bool // plant at function entries

	// FuncFilter keeps functions for which it returns true (any of the names of
	// an address may match). Nil keeps all.
	FuncFilter func(name string) bool
	// FileFilter keeps source files for which it returns true. Nil keeps all.
	FileFilter func(path string) bool
	// SkipFile leaves out files that are not the user's (the Go runtime and
	// standard library) unless FileFilter asked for them. Nil skips nothing.
	SkipFile func(path string) bool
	// SkipFunc leaves out functions that are not the user's by name and file
	// (Go's ABI wrappers and package inits carry no file of the runtime's).
	// Nil skips nothing.
	SkipFunc func(name, file string) bool
}

// A FuncInfo describes one function of the executable, index-aligned with
// symtab.File.Funcs.
type FuncInfo struct {
	Name    string
	Aliases []string
	Addr    uint64 // link-time entry
	File    string // where DWARF puts the entry, "" if unknown
	Line    int
	Planted bool // the entry carries a function site
}

// A LineRef is one source line that has at least one planted row.
type LineRef struct {
	File string
	Line int
}

// A DroppedRow is a line-table row that was not planted, and why.
type DroppedRow struct {
	Addr   uint64
	File   string
	Line   int
	Reason string
}

// Reasons for dropping a row.
const (
	ReasonNotInsnStart  = "not an instruction start"
	ReasonUndecodable   = "after undecodable bytes"
	ReasonOutsideFunc   = "outside any function symbol"
	ReasonNotExecutable = "not in an executable segment"
)

// A Plan is the result of planning: the site table and what its indexes mean.
type Plan struct {
	Table   *Table
	Funcs   []FuncInfo
	Lines   []LineRef
	Dropped []DroppedRow
}

// NewPlan chooses the sites for one executable. lt may be nil when only
// functions are counted. Every site is the start of an instruction: line rows
// are checked against a linear decode of their function, function sites are
// symbol addresses.
func NewPlan(sym *symtab.File, lt *lineinfo.Table, opt PlanOptions) *Plan {
	p := &Plan{Funcs: make([]FuncInfo, len(sym.Funcs))}
	keepFile := func(path string) bool {
		if opt.FileFilter != nil {
			return opt.FileFilter(path)
		}
		return opt.SkipFile == nil || !opt.SkipFile(path)
	}
	keepFunc := make([]bool, len(sym.Funcs))
	for i, f := range sym.Funcs {
		fi := FuncInfo{Name: f.Name, Aliases: f.Aliases, Addr: f.Addr}
		if lt != nil {
			if file, line, ok := lt.Lookup(f.Addr); ok {
				fi.File, fi.Line = file, line
			}
		}
		p.Funcs[i] = fi
		keep := opt.FuncFilter == nil || opt.FuncFilter(f.Name)
		for _, a := range f.Aliases {
			keep = keep || opt.FuncFilter(a)
		}
		if keep && opt.SkipFunc != nil && opt.SkipFunc(f.Name, fi.File) {
			keep = false
		}
		if keep && fi.File != "" {
			keep = keepFile(fi.File)
		} else if keep && opt.FileFilter != nil {
			keep = false // a file was asked for and this function has none
		}
		keepFunc[i] = keep
	}

	var specs []SiteSpec
	if opt.Funcs {
		for i, f := range sym.Funcs {
			if !keepFunc[i] {
				continue
			}
			code, ok := sym.Code(f.Addr, 16)
			if !ok {
				code, ok = sym.Code(f.Addr, 1)
			}
			if !ok {
				continue
			}
			s := SiteSpec{Addr: f.Addr, Kind: KindFunc, Func: int32(i), Entry: true}
			markRep(&s, code)
			specs = append(specs, s)
			p.Funcs[i].Planted = true
		}
	}
	if opt.Lines && lt != nil {
		specs = append(specs, p.lineSpecs(sym, lt, keepFunc, keepFile)...)
	}
	p.Table = NewTable(specs, len(p.Lines))
	return p
}

// lineSpecs sweeps the rows (sorted by address) against the functions (sorted by
// address), decoding each function that has rows once.
func (p *Plan) lineSpecs(sym *symtab.File, lt *lineinfo.Table, keepFunc []bool, keepFile func(string) bool) []SiteSpec {
	// Lines are keyed by path, not file index: a line table may name one file
	// under several indexes (DWARF 5 repeats the primary file as entry 0).
	type key struct {
		file string
		line uint32
	}
	index := map[key]int32{}
	fileOK := make([]int8, len(lt.Files)) // 0 unknown, 1 keep, -1 drop
	var specs []SiteSpec
	rows := lt.Rows
	r := 0
	drop := func(row lineinfo.Row, reason string) {
		p.Dropped = append(p.Dropped, DroppedRow{Addr: row.Addr, File: lt.Files[row.File], Line: int(row.Line), Reason: reason})
	}
	keepRow := func(row lineinfo.Row) bool {
		if int(row.File) >= len(fileOK) {
			return false
		}
		if fileOK[row.File] == 0 {
			fileOK[row.File] = -1
			if keepFile(lt.Files[row.File]) {
				fileOK[row.File] = 1
			}
		}
		return fileOK[row.File] == 1
	}
	for fi, f := range sym.Funcs {
		end := f.Addr + f.Size
		for r < len(rows) && rows[r].Addr < f.Addr {
			if keepRow(rows[r]) {
				drop(rows[r], ReasonOutsideFunc)
			}
			r++
		}
		first := r
		for r < len(rows) && rows[r].Addr < end {
			r++
		}
		if first == r || !keepFunc[fi] {
			continue
		}
		var mine []lineinfo.Row
		for _, row := range rows[first:r] {
			if keepRow(row) {
				mine = append(mine, row)
			}
		}
		if len(mine) == 0 {
			continue
		}
		code, ok := sym.Code(f.Addr, int(f.Size))
		if !ok {
			for _, row := range mine {
				drop(row, ReasonNotExecutable)
			}
			continue
		}
		starts, derr := symtab.InstructionStarts(code, f.Addr)
		limit := end
		if derr != nil {
			// Nothing from the first undecodable instruction on can be
			// checked, even when that is the function's first byte.
			limit = f.Addr
			if len(starts) > 0 {
				limit = starts[len(starts)-1] + 1
			}
		}
		for k := 0; k < len(mine); {
			row := mine[k]
			j := k
			for j < len(mine) && mine[j].Addr == row.Addr {
				j++
			}
			if row.Addr >= limit && derr != nil {
				for _, x := range mine[k:j] {
					drop(x, ReasonUndecodable)
				}
				k = j
				continue
			}
			n := sort.Search(len(starts), func(q int) bool { return starts[q] >= row.Addr })
			if n == len(starts) || starts[n] != row.Addr {
				for _, x := range mine[k:j] {
					drop(x, ReasonNotInsnStart)
				}
				k = j
				continue
			}
			s := SiteSpec{Addr: row.Addr, Kind: KindLine, Func: int32(fi), Entry: row.Addr == f.Addr}
			for _, x := range mine[k:j] {
				kk := key{lt.Files[x.File], x.Line}
				li, ok := index[kk]
				if !ok {
					li = int32(len(p.Lines))
					index[kk] = li
					p.Lines = append(p.Lines, LineRef{File: lt.Files[x.File], Line: int(x.Line)})
				}
				s.Lines = append(s.Lines, li)
			}
			markRep(&s, code[row.Addr-f.Addr:])
			specs = append(specs, s)
			k = j
		}
	}
	for ; r < len(rows); r++ {
		if keepRow(rows[r]) {
			drop(rows[r], ReasonOutsideFunc)
		}
	}
	return specs
}

// markRep flags a rep-prefixed string instruction (Intel SDM vol. 2, REP/REPE/
// REPNE: with TF set the processor traps after each iteration, so the thread
// stays at the same address for several single-steps) and records its length.
func markRep(s *SiteSpec, code []byte) {
	rep := false
	k := 0
	for ; k < len(code) && k < 15; k++ {
		b := code[k]
		switch {
		case b == 0xF2 || b == 0xF3:
			rep = true
			continue
		case b == 0x66 || b == 0x67 || b == 0x2E || b == 0x36 || b == 0x3E || b == 0x26 || b == 0x64 || b == 0x65 || b == 0xF0:
			continue
		case b >= 0x40 && b <= 0x4F:
			continue
		}
		break
	}
	if !rep || k >= len(code) {
		return
	}
	switch op := code[k]; {
	case op >= 0xA4 && op <= 0xA7, op >= 0xAA && op <= 0xAF, op >= 0x6C && op <= 0x6F:
	default:
		return
	}
	inst, err := x86asm.Decode(code, 64)
	if err != nil {
		return
	}
	s.Rep = true
	s.Len = uint8(inst.Len)
}
