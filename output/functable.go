package output

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/patchprof/patchprof/profile"
)

// functions writes the function table: every function by its count (or
// its sampled time), with its source place and its block summary.
func (r *report) functions(list []profile.Function) {
	funcs := slices.Clone(list)
	if len(funcs) == 0 {
		r.extra = append(r.extra, "the profile has no function counts")
		return
	}
	names := make(map[string]string, len(funcs)) // symbol -> display name
	for _, f := range funcs {
		names[f.Name] = escapeControl(DisplayName(f.Name))
	}
	byTime := r.opt.Sort.resolve(r.p) == KeyTime
	// The keys apart from the functions: a comparison that copied two
	// Functions and looked their names up twice was most of the report
	// of 100,000 functions.
	type key struct {
		count, timeNS uint64
		disp, name    string
		addr          profile.Address
		i             int
	}
	keys := make([]key, len(funcs))
	for i, f := range funcs {
		keys[i] = key{f.Count, f.TimeNS, names[f.Name], f.Name, f.Address, i}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if byTime && a.timeNS != b.timeNS {
			return cmp.Compare(b.timeNS, a.timeNS)
		}
		return cmp.Or(cmp.Compare(b.count, a.count), strings.Compare(a.disp, b.disp),
			strings.Compare(a.name, b.name), cmp.Compare(a.addr, b.addr))
	})
	for i, k := range keys {
		funcs[i] = list[k.i]
	}
	title := "FUNCTION CALLS"
	if r.opt.Top > 0 && len(funcs) > r.opt.Top {
		title = fmt.Sprintf("FUNCTION CALLS (%d of %d functions)", r.opt.Top, len(funcs))
		funcs = funcs[:r.opt.Top]
	}
	cw, nw := len("COUNT"), len("FUNCTION")
	limit := r.opt.maxNameColumn()
	for _, f := range funcs {
		cw = max(cw, len(strconv.FormatUint(f.Count, 10)))
		if n := utf8.RuneCountInString(names[f.Name]); n <= limit {
			nw = max(nw, n)
		}
	}
	var maxCalls uint64
	for _, f := range funcs {
		maxCalls = max(maxCalls, f.Count)
	}
	tcells, tw := r.funcTimes(funcs)
	r.section()
	r.line(r.paint(sgrBold, title))
	head := padLeft("COUNT", cw)
	if tw != nil {
		head += strings.Replace(timeHeader(*tw), "PER EXEC", padLeft("PER CALL", len("PER EXEC")), 1)
	}
	r.line(r.paint(sgrBold, head+"  "+padRight("FUNCTION", nw)+"  LOCATION"))
	for k, f := range funcs {
		loc := ""
		if f.File != "" {
			loc = r.display(f.File)
			if f.Line > 0 {
				loc += ":" + strconv.Itoa(f.Line)
			}
		}
		count := r.paintCell(heat(f.Count, maxCalls), padLeft(strconv.FormatUint(f.Count, 10), cw))
		if tw != nil {
			count += timeColumns(tcells[k], *tw)
		}
		r.line(count + "  " + padRight(names[f.Name], nw) + "  " + loc + blockSummary(f))
	}
}
