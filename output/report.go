package output

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/patchprof/patchprof/profile"
)

// ErrNilProfile is returned by Write when given no profile.
var ErrNilProfile = errors.New("no profile to report")

// Write writes the whole report for p to w: the header line, the listing
// (when p counted lines), the function table (when p counted functions)
// and the notes. The layout is described in the package documentation.
// The report is a function of p, opt and the source files only: the same
// inputs give the same bytes.
func Write(w io.Writer, p *profile.Profile, opt Options) error {
	if p == nil {
		return ErrNilProfile
	}
	if opt.Style < Counts || opt.Style > Scaled {
		return fmt.Errorf("%w %d", ErrUnknownStyle, int(opt.Style))
	}
	if opt.ReadFile == nil {
		opt.ReadFile = os.ReadFile
	}
	r := &report{p: p, opt: &opt, cwd: cleanDir(opt.Cwd), out: w}
	for _, l := range p.Lines {
		r.maxTime = max(r.maxTime, l.TimeNS)
		if l.Line >= 1 && l.Count > 0 {
			r.maxCount = max(r.maxCount, l.Count)
			if r.minCount == 0 || l.Count < r.minCount {
				r.minCount = l.Count
			}
		}
	}
	r.header()
	if !r.modules() {
		r.body(p.Lines, p.Functions)
	}
	if opt.Style == Histogram && r.maxCount > 0 && p.HasLines() {
		if n := histScale(r.minCount, r.maxCount, opt.barWidth()).note(); n != "" {
			r.extra = append(r.extra, n)
		}
	}
	if p.HasFuncs() {
		r.callGraph(p.Functions)
	}
	r.timeNote()
	r.notes()
	if err := r.flush(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// report accumulates the output and the notes found on the way.
type report struct {
	p        *profile.Profile
	opt      *Options
	cwd      string
	maxCount uint64 // the highest line count of the whole profile
	minCount uint64 // the lowest nonzero line count of the whole profile
	maxTime  uint64 // the highest line time (ns) of the whole profile
	buf      bytes.Buffer
	extra    []string // generated notes, printed after p.Notes
	// out, when not nil, takes buf's bytes whenever they pass flushAt,
	// so that a listing of a quarter of a million rows is never whole in
	// memory; flushed counts the bytes it took, err its first error
	// (after which nothing more is written).
	out     io.Writer
	flushed int64
	err     error
}

// flushAt is how many bytes of a report wait in its buffer before they go
// to its writer: small enough that the buffer, reused after each flush,
// stays a few pages. Grown by doubling to 1 MB, it allocated about 2 MB
// for a 481 KB listing, fresh memory a VM faults in slowly: cJSON's
// print_number under --lines --funcs ran in 88-91 ms then, 82-84 ms now.
const flushAt = 64 << 10

// flush writes what the buffer holds to r.out and returns the first error
// of any write.
func (r *report) flush() error {
	if r.out != nil && r.err == nil && r.buf.Len() > 0 {
		n, err := r.out.Write(r.buf.Bytes())
		r.flushed += int64(n)
		r.err = err
	}
	r.buf.Reset()
	return r.err
}

// wrote is how many bytes the report has written so far.
func (r *report) wrote() int64 { return r.flushed + int64(r.buf.Len()) }

// body writes the listing (or the hottest lines) and the function table
// of one module, or of the whole profile when it has no modules.
func (r *report) body(lines []profile.Line, funcs []profile.Function) {
	if r.p.HasLines() {
		if r.opt.Top > 0 {
			r.hottest(lines)
		} else {
			r.listing(lines)
		}
	}
	if r.p.HasFuncs() {
		r.functions(funcs)
	}
}

// modules writes one section per module that has counts, in
// Profile.ModulePaths order, and reports whether it wrote any: a profile
// without modules, or whose modules counted nothing, is rendered as one
// body as before modules existed.
func (r *report) modules() bool {
	p := r.p
	if len(p.Modules) == 0 {
		return false
	}
	kinds := map[string]string{"": profile.ModuleExecutable}
	for _, m := range p.Modules {
		kinds[m.Path] = m.Kind
	}
	lines := make(map[string][]profile.Line)
	funcs := make(map[string][]profile.Function)
	for _, l := range p.Lines {
		lines[l.Module] = append(lines[l.Module], l)
	}
	for _, f := range p.Functions {
		funcs[f.Module] = append(funcs[f.Module], f)
	}
	wrote := false
	for _, m := range p.ModulePaths() {
		ls, fs := lines[m], funcs[m]
		if len(ls) == 0 && len(fs) == 0 {
			continue
		}
		wrote = true
		r.section()
		title := "MODULE " + r.display(p.ModuleName(m))
		if k := kinds[m]; k != "" {
			title += " (" + k + ")"
		}
		r.line(r.paint(sgrBold, title))
		if p.HasLines() && len(ls) > 0 {
			if r.opt.Top > 0 {
				r.hottest(ls)
			} else {
				r.listing(ls)
			}
		}
		if p.HasFuncs() && len(fs) > 0 {
			r.functions(fs)
		}
	}
	return wrote
}

// line writes one output line, without trailing blanks.
func (r *report) line(s string) {
	r.buf.WriteString(strings.TrimRight(s, " \t"))
	r.buf.WriteByte('\n')
	if r.out != nil && r.buf.Len() >= flushAt {
		r.flush()
	}
}

// lineBytes is line for a line built in b.
func (r *report) lineBytes(b []byte) {
	r.buf.Write(bytes.TrimRight(b, " \t"))
	r.buf.WriteByte('\n')
	if r.out != nil && r.buf.Len() >= flushAt {
		r.flush()
	}
}

// section starts a new section: one blank line after what came before.
func (r *report) section() {
	if r.wrote() > 0 {
		r.buf.WriteByte('\n')
	}
}

func cleanDir(d string) string {
	if d == "" {
		return ""
	}
	return path.Clean(filepath.ToSlash(d))
}

// display shortens file for the report: relative to Cwd when under it, its
// control characters escaped (escapeControl).
func (r *report) display(file string) string {
	return escapeControl(r.relative(file))
}

// relative returns file relative to Cwd when it is under it.
func (r *report) relative(file string) string {
	if r.cwd == "" {
		return file
	}
	if r.cwd == "/" {
		if rest, ok := strings.CutPrefix(file, "/"); ok && rest != "" {
			return rest
		}
		return file
	}
	if rest, ok := strings.CutPrefix(file, r.cwd+"/"); ok && rest != "" {
		return rest
	}
	return file
}

// A row is one line of the listing before it is laid out.
type row struct {
	file   string // as displayed
	line   int
	count  string // the COUNT cell
	n      uint64 // the count, when count is a number or bar
	crash  bool
	source string    // tabs expanded
	tc     [3]string // the time cells (TIME, PER EXEC, SAMPLES) of a timed profile
	tns    uint64    // the line's time, for the heat by time
	folded int       // > 0: the row stands for this many folded lines
	// foldedNoCode is how many of the folded lines have no code (comments,
	// blank lines, declarations); the others have code that never ran.
	foldedNoCode int
	// title, when not empty, makes the row a title in the SOURCE column
	// (a rule or an instance's name, --instances) with no line or count.
	title string
}

// fileCounts is the counted lines of one source file.
type fileCounts struct {
	path   string
	counts map[int]uint64
	times  map[int]timeOf // sampled time by line (--time)
	lines  []int          // sorted keys of counts
}

// byFile groups p.Lines by file, in path order, leaving p untouched.
// Entries for line numbers below 1 are ignored; duplicates add up.
func byFile(lines []profile.Line) []fileCounts {
	idx := make(map[string]int)
	var files []fileCounts
	for _, l := range lines {
		if l.Line < 1 {
			continue
		}
		i, ok := idx[l.File]
		if !ok {
			i = len(files)
			idx[l.File] = i
			files = append(files, fileCounts{path: l.File, counts: make(map[int]uint64), times: make(map[int]timeOf)})
		}
		f := &files[i]
		if _, seen := f.counts[l.Line]; !seen {
			f.lines = append(f.lines, l.Line)
		}
		f.counts[l.Line] = profile.SumCounts(f.counts[l.Line], l.Count)
		if l.Samples > 0 {
			t := f.times[l.Line]
			f.times[l.Line] = timeOf{t.samples + l.Samples, t.ns + l.TimeNS}
		}
	}
	slices.SortFunc(files, func(a, b fileCounts) int { return strings.Compare(a.path, b.path) })
	for i := range files {
		slices.Sort(files[i].lines)
	}
	return files
}

func (r *report) listing(lines []profile.Line) {
	files := byFile(lines)
	branches := branchIndex(r.p, lines) // --blocks: outcomes beside the source (branches.go)
	calls := callIndex(r.p)             // --calls: each call site's calls (callgraph.go)
	if len(files) == 0 {
		r.extra = append(r.extra, "the profile has no line counts")
		return
	}
	// The rows are sized first: a listing can have a quarter of a
	// million of them (the SQLite amalgamation).
	srcs := make([][]string, len(files))
	found := make([]bool, len(files))
	total := 0
	module := lines[0].Module
	for k, f := range files {
		srcs[k], found[k] = r.source(f.path)
		total += max(len(srcs[k]), len(f.lines))
		if found[k] {
			r.staleSource(f.path, module)
		}
	}
	groups := r.listingGroups(lines)
	allBranches := branches
	branches = ownBranches(branches, groups) // an instance's are on its rows
	rows := make([]row, 0, total)
	crashShown := false
	for k, f := range files {
		src := srcs[k]
		name := r.display(f.path)
		isCrash := func(line int) bool {
			return r.p.Exit.Signal != "" && r.p.Exit.File == f.path && r.p.Exit.Line == line
		}
		first := len(rows)
		add := func(line int, text string) {
			c, has := f.counts[line]
			rw := row{file: name, line: line, source: text + branchSuffix(branches, f.path, line) + callSuffix(calls, module, f.path, line), crash: isCrash(line)}
			if has {
				rw.count = r.countCell(c, r.maxCount)
				rw.n = c
				r.setTime(&rw, f.times[line])
			}
			crashShown = crashShown || rw.crash
			rows = append(rows, rw)
		}
		if !found[k] {
			for _, l := range f.lines {
				add(l, "")
			}
			r.extra = append(r.extra, fmt.Sprintf("source not found: %s (use --source-dir DIR or --subst-path FROM=TO)", f.path))
			continue
		}
		fileGroups := groups[f.path]
		for i, text := range src {
			add(i+1, text)
			if len(fileGroups) > 0 {
				rows = r.instanceRows(rows, fileGroups, allBranches, f.path, name, i+1, src)
			}
		}
		if last := f.lines[len(f.lines)-1]; last > len(src) {
			for _, l := range f.lines {
				if l > len(src) {
					add(l, "")
				}
			}
			r.extra = append(r.extra, fmt.Sprintf("%s has %d lines but the profile counts line %d: the source has changed since the build", f.path, len(src), last))
		}
		if r.opt.Fold {
			rows = append(rows[:first], fold(rows[first:])...)
		}
	}
	r.table("", rows, crashShown)
}

// The folding rule (package documentation, "Folding"): a run of more than
// foldRun consecutive lines that did not run is cut to its first and last
// foldContext lines around one "... N lines not executed ..." row.
const (
	foldRun     = 6
	foldContext = 2
)

// fold folds the long runs of rows of one file that did not run.
func fold(rows []row) []row {
	idle := func(rw row) bool { return !rw.crash && rw.n == 0 && rw.title == "" }
	var out []row
	for i := 0; i < len(rows); {
		j := i
		for j < len(rows) && idle(rows[j]) {
			j++
		}
		if j-i > foldRun {
			out = append(out, rows[i:i+foldContext]...)
			fr := row{file: rows[i].file, folded: j - i - 2*foldContext}
			for _, rw := range rows[i+foldContext : j-foldContext] {
				if rw.count == "" {
					fr.foldedNoCode++
				}
			}
			out = append(out, fr)
			out = append(out, rows[j-foldContext:j]...)
		} else {
			out = append(out, rows[i:j]...)
		}
		if j < len(rows) {
			out = append(out, rows[j])
		}
		i = j + 1
	}
	return out
}

// foldText says what n folded lines are, noCode of them without code:
// lines that did not run because they hold no code are not "not executed".
func foldText(n, noCode int) string {
	switch noCode {
	case 0:
		return fmt.Sprintf("%d lines not executed", n)
	case n:
		return fmt.Sprintf("%d lines without code", n)
	}
	return fmt.Sprintf("%d lines: %d not executed, %d without code", n, n-noCode, noCode)
}

// table lays out rows under the column header, after title when it is
// not empty; crashShown adds the crash marker column.
func (r *report) table(title string, rows []row, crashShown bool) {
	bars := r.opt.Style != Counts
	fw, lw, cw := len("FILE"), len("LINE"), len("COUNT")
	if !bars {
		cw = 7
	}
	for _, rw := range rows {
		fw = max(fw, utf8.RuneCountInString(rw.file))
		lw = max(lw, len(strconv.Itoa(rw.line)))
		cw = max(cw, len(rw.count))
	}
	alignCount := padLeft
	if bars {
		alignCount = padRight
	}
	tw, tcols := r.timeLayout(rows)
	marker := func(crash bool) string {
		switch {
		case !crashShown:
			return ""
		case crash:
			return r.paint(sgrCrash, ">>>") + " "
		}
		return "    "
	}

	r.section()
	if title != "" {
		r.line(r.paint(sgrBold, title))
	}
	r.line(r.paint(sgrBold, padRight("FILE", fw)+"  "+padLeft("LINE", lw)+"  "+alignCount("COUNT", cw)+tcols("")+"  "+marker(false)+"SOURCE"))
	var ln []byte
	for _, rw := range rows {
		if rw.folded > 0 {
			r.line(padRight(rw.file, fw) + "  " + padLeft("", lw) + "  " + alignCount("", cw) + tcols("-") + ": " + marker(false) +
				r.paint(sgrDim, "... "+foldText(rw.folded, rw.foldedNoCode)+" ..."))
			continue
		}
		if rw.title != "" {
			r.line(padRight(rw.file, fw) + "  " + padLeft("", lw) + "  " + alignCount("", cw) + tcols("") + ": " + marker(false) + rw.title)
			continue
		}
		// Appended in place, without temporary strings: a listing of
		// the SQLite amalgamation is a quarter of a million rows.
		ln = appendPad(ln[:0], rw.file, fw, false)
		ln = append(ln, "  "...)
		ln = appendPad(ln, strconv.Itoa(rw.line), lw, true)
		ln = append(ln, "  "...)
		if rw.count == "" {
			ln = appendSpaces(ln, cw)
		} else {
			ln = append(ln, r.paintCell(r.heatOf(rw), alignCount(rw.count, cw))...)
		}
		if tw != nil {
			ln = append(ln, timeColumns(rw.tc, *tw)...)
		}
		ln = append(ln, ": "...)
		ln = append(ln, marker(rw.crash)...)
		ln = append(ln, rw.source...)
		if rw.crash {
			ln = append(bytes.TrimRight(ln, " \t"), "  "...)
			ln = append(ln, r.paint(sgrCrash, "<<< "+r.p.Exit.Signal)...)
		}
		r.lineBytes(ln)
	}
}

// appendPad appends s padded with blanks to w runes: on the left (right
// aligned) or on the right.
func appendPad(b []byte, s string, w int, left bool) []byte {
	n := w - utf8.RuneCountInString(s)
	if left {
		b = appendSpaces(b, n)
	}
	b = append(b, s...)
	if !left {
		b = appendSpaces(b, n)
	}
	return b
}

// appendSpaces appends n blanks (none when n <= 0).
func appendSpaces(b []byte, n int) []byte {
	for ; n > 0; n-- {
		b = append(b, ' ')
	}
	return b
}

// hottest writes the Options.Top lines with the highest counts (ties by
// file and line), with their source text.
func (r *report) hottest(lines []profile.Line) {
	files := byFile(lines)
	type hot struct {
		file  *fileCounts
		line  int
		count uint64
		ns    uint64
	}
	var all []hot
	total := 0
	for i := range files {
		f := &files[i]
		for _, l := range f.lines {
			total++
			if c := f.counts[l]; c > 0 {
				all = append(all, hot{f, l, c, f.times[l].ns})
			}
		}
	}
	if total == 0 {
		r.extra = append(r.extra, "the profile has no line counts")
		return
	}
	byTime := r.opt.Sort.resolve(r.p) == KeyTime
	slices.SortStableFunc(all, func(a, b hot) int {
		if byTime && a.ns != b.ns {
			return cmp.Compare(b.ns, a.ns)
		}
		return cmp.Or(cmp.Compare(b.count, a.count), strings.Compare(a.file.path, b.file.path), cmp.Compare(a.line, b.line))
	})
	if len(all) > r.opt.Top {
		all = all[:r.opt.Top]
	}
	sources := make(map[string][]string)
	var rows []row
	crashShown := false
	for _, h := range all {
		src, ok := sources[h.file.path]
		if !ok {
			var found bool
			src, found = r.source(h.file.path)
			sources[h.file.path] = src
			if !found {
				r.extra = append(r.extra, fmt.Sprintf("source not found: %s (use --source-dir DIR or --subst-path FROM=TO)", h.file.path))
			}
		}
		text := ""
		if h.line <= len(src) {
			text = src[h.line-1]
		}
		crash := r.p.Exit.Signal != "" && r.p.Exit.File == h.file.path && r.p.Exit.Line == h.line
		crashShown = crashShown || crash
		rw := row{file: r.display(h.file.path), line: h.line, count: r.countCell(h.count, r.maxCount),
			n: h.count, crash: crash, source: text}
		r.setTime(&rw, h.file.times[h.line])
		rows = append(rows, rw)
	}
	r.table(fmt.Sprintf("HOTTEST LINES (%d of %d lines with code)", len(rows), total), rows, crashShown)
}

func padLeft(s string, w int) string {
	if n := w - utf8.RuneCountInString(s); n > 0 {
		return strings.Repeat(" ", n) + s
	}
	return s
}

func padRight(s string, w int) string {
	if n := w - utf8.RuneCountInString(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

func (r *report) notes() {
	notes := slices.DeleteFunc(slices.Clone(r.p.Notes), func(n string) bool {
		return n == PinnedNote || !r.opt.EngineNotes && profile.IsDetailNote(n) // said in the header; run detail
	})
	if len(notes) == 0 && len(r.extra) == 0 {
		return
	}
	r.section()
	for _, n := range notes {
		r.line("note: " + escapeControl(n))
	}
	for _, n := range r.extra {
		r.line("note: " + escapeControl(n))
	}
}
