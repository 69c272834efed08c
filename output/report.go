package output

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math/bits"
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
	r := &report{p: p, opt: &opt, cwd: cleanDir(opt.Cwd)}
	r.header()
	if p.HasLines() {
		r.listing()
	}
	if p.HasFuncs() {
		r.functions()
	}
	r.notes()
	if _, err := w.Write(r.buf.Bytes()); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// report accumulates the output and the notes found on the way.
type report struct {
	p     *profile.Profile
	opt   *Options
	cwd   string
	buf   bytes.Buffer
	extra []string // generated notes, printed after p.Notes
}

// line writes one output line, without trailing blanks.
func (r *report) line(s string) {
	r.buf.WriteString(strings.TrimRight(s, " \t"))
	r.buf.WriteByte('\n')
}

// section starts a new section: one blank line after what came before.
func (r *report) section() {
	if r.buf.Len() > 0 {
		r.buf.WriteByte('\n')
	}
}

func cleanDir(d string) string {
	if d == "" {
		return ""
	}
	return path.Clean(filepath.ToSlash(d))
}

// display shortens file for the report: relative to Cwd when under it.
func (r *report) display(file string) string {
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

func (r *report) header() {
	p := r.p
	prog := p.Executable
	if len(p.Args) > 0 && p.Args[0] != "" {
		prog = p.Args[0]
	}
	if prog == "" {
		prog = "the target"
	}
	e := p.Exit
	var b strings.Builder
	b.WriteString("patchprof: ")
	b.WriteString(prog)
	switch {
	case e.Detached:
		b.WriteString(" detached: it runs on, unharmed")
	case e.Running:
		b.WriteString(" is running: interim report")
	case e.Code != nil:
		fmt.Fprintf(&b, " exited with code %d", *e.Code)
	case e.Signal != "":
		b.WriteString(" killed by ")
		b.WriteString(e.Signal)
		if e.FaultAddress != "" {
			fmt.Fprintf(&b, " (fault address %s)", e.FaultAddress)
		}
		if e.Function != "" {
			b.WriteString(" in ")
			b.WriteString(e.Function)
		}
		if e.File != "" {
			b.WriteString(" at ")
			b.WriteString(r.display(e.File))
			if e.Line > 0 {
				b.WriteString(":")
				b.WriteString(strconv.Itoa(e.Line))
			}
		}
	default:
		b.WriteString(" ended with unknown status")
	}
	r.line(b.String())
}

// A row is one line of the listing before it is laid out.
type row struct {
	file   string // as displayed
	line   int
	count  string // the COUNT cell
	crash  bool
	source string // tabs expanded
}

// fileCounts is the counted lines of one source file.
type fileCounts struct {
	path   string
	counts map[int]uint64
	lines  []int // sorted keys of counts
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
			files = append(files, fileCounts{path: l.File, counts: make(map[int]uint64)})
		}
		f := &files[i]
		if _, seen := f.counts[l.Line]; !seen {
			f.lines = append(f.lines, l.Line)
		}
		f.counts[l.Line] += l.Count
	}
	slices.SortFunc(files, func(a, b fileCounts) int { return strings.Compare(a.path, b.path) })
	for i := range files {
		slices.Sort(files[i].lines)
	}
	return files
}

func (r *report) listing() {
	files := byFile(r.p.Lines)
	if len(files) == 0 {
		r.extra = append(r.extra, "the profile has no line counts")
		return
	}
	var maxCount uint64
	for _, f := range files {
		for _, c := range f.counts {
			maxCount = max(maxCount, c)
		}
	}
	var rows []row
	crashShown := false
	for _, f := range files {
		src, found := r.source(f.path)
		name := r.display(f.path)
		isCrash := func(line int) bool {
			return r.p.Exit.Signal != "" && r.p.Exit.File == f.path && r.p.Exit.Line == line
		}
		add := func(line int, text string) {
			c, has := f.counts[line]
			rw := row{file: name, line: line, source: text, crash: isCrash(line)}
			if has {
				rw.count = r.countCell(c, maxCount)
			}
			crashShown = crashShown || rw.crash
			rows = append(rows, rw)
		}
		if !found {
			for _, l := range f.lines {
				add(l, "")
			}
			r.extra = append(r.extra, fmt.Sprintf("source not found: %s (use --source-dir DIR or --subst-path FROM=TO)", f.path))
			continue
		}
		for i, text := range src {
			add(i+1, text)
		}
		if last := f.lines[len(f.lines)-1]; last > len(src) {
			for _, l := range f.lines {
				if l > len(src) {
					add(l, "")
				}
			}
			r.extra = append(r.extra, fmt.Sprintf("%s has %d lines but the profile counts line %d: the source has changed since the build", f.path, len(src), last))
		}
	}

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
	marker := func(crash bool) string {
		switch {
		case !crashShown:
			return ""
		case crash:
			return ">>> "
		}
		return "    "
	}

	r.section()
	r.line(padRight("FILE", fw) + "  " + padLeft("LINE", lw) + "  " + alignCount("COUNT", cw) + "  " + marker(false) + "SOURCE")
	for _, rw := range rows {
		s := padRight(rw.file, fw) + "  " + padLeft(strconv.Itoa(rw.line), lw) + "  " +
			alignCount(rw.count, cw) + ": " + marker(rw.crash) + rw.source
		if rw.crash {
			s = strings.TrimRight(s, " \t") + "  <<< " + r.p.Exit.Signal
		}
		r.line(s)
	}
}

// countCell is the COUNT cell of a line with code that ran count times;
// maxCount is the highest count in the listing (for Scaled).
func (r *report) countCell(count, maxCount uint64) string {
	if count == 0 {
		return "#####"
	}
	n := strconv.FormatUint(count, 10)
	bw := r.opt.barWidth()
	switch r.opt.Style {
	case Histogram:
		if count <= uint64(bw) {
			return strings.Repeat("*", int(count)) + " (" + n + ")"
		}
		return strings.Repeat("*", bw-1) + "+ (" + n + ")"
	case Scaled:
		return strings.Repeat("*", scaled(count, maxCount, bw)) + " (" + n + ")"
	}
	return n
}

// scaled returns round(count*width/maxCount), at least 1, computed exactly
// in 128 bits so huge counts neither overflow nor lose precision.
// Preconditions: 0 < count <= maxCount.
func scaled(count, maxCount uint64, width int) int {
	hi, lo := bits.Mul64(count, uint64(width))
	q, rem := bits.Div64(hi, lo, maxCount) // hi < maxCount since count <= maxCount
	if rem >= maxCount-rem {
		q++ // round half up
	}
	return max(int(q), 1)
}

// source finds and reads the source of file, split into lines with tabs
// expanded. See the package documentation for the search order.
func (r *report) source(file string) ([]string, bool) {
	for _, name := range r.candidates(file) {
		data, err := r.opt.ReadFile(name)
		if err == nil {
			return splitSource(data), true
		}
	}
	return nil, false
}

// candidates lists the names to try for file, without repeats.
func (r *report) candidates(file string) []string {
	p := file
	for _, s := range r.opt.Subst {
		if q, ok := s.apply(file); ok {
			p = q
			break
		}
	}
	names := []string{p}
	rel := strings.TrimLeft(p, "/")
	base := path.Base(p)
	for _, dir := range r.opt.SourceDirs {
		if rel != "" {
			names = append(names, filepath.Join(dir, filepath.FromSlash(rel)))
		}
		if base != "/" && base != "." {
			names = append(names, filepath.Join(dir, base))
		}
	}
	var out []string
	seen := make(map[string]bool)
	for _, n := range names {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// splitSource splits a source file into lines (a final newline does not
// start another line), drops a CR before each newline and expands tabs.
func splitSource(data []byte) []string {
	s := string(data)
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = expandTabs(strings.TrimSuffix(l, "\r"))
	}
	return lines
}

// tabStop is the tab width of the listing's source column.
const tabStop = 8

// expandTabs replaces each tab by the spaces up to the next tab stop,
// counting one column per rune (an invalid byte counts as one).
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, c := range s {
		if c == '\t' {
			n := tabStop - col%tabStop
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(c)
		col++
	}
	return b.String()
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

func (r *report) functions() {
	funcs := slices.Clone(r.p.Functions)
	if len(funcs) == 0 {
		r.extra = append(r.extra, "the profile has no function counts")
		return
	}
	slices.SortFunc(funcs, func(a, b profile.Function) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Name, b.Name),
			strings.Compare(a.Address, b.Address))
	})
	cw, nw := len("COUNT"), len("FUNCTION")
	limit := r.opt.maxNameColumn()
	for _, f := range funcs {
		cw = max(cw, len(strconv.FormatUint(f.Count, 10)))
		if n := utf8.RuneCountInString(f.Name); n <= limit {
			nw = max(nw, n)
		}
	}
	r.section()
	r.line("FUNCTION CALLS")
	r.line(padLeft("COUNT", cw) + "  " + padRight("FUNCTION", nw) + "  LOCATION")
	for _, f := range funcs {
		loc := ""
		if f.File != "" {
			loc = r.display(f.File)
			if f.Line > 0 {
				loc += ":" + strconv.Itoa(f.Line)
			}
		}
		r.line(padLeft(strconv.FormatUint(f.Count, 10), cw) + "  " + padRight(f.Name, nw) + "  " + loc)
	}
}

func (r *report) notes() {
	if len(r.p.Notes) == 0 && len(r.extra) == 0 {
		return
	}
	r.section()
	for _, n := range r.p.Notes {
		r.line("note: " + n)
	}
	for _, n := range r.extra {
		r.line("note: " + n)
	}
}
