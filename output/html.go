package output

import (
	"bufio"
	"cmp"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/patchprof/patchprof/profile"
)

// WriteHTML writes p to w as one self-contained HTML page: no scripts,
// styles or images are fetched, so the file can be mailed or archived as
// it is. The page has, in order:
//
//   - the report header (as Write prints it) and, when a signal killed the
//     target at a known line, a link to that line;
//   - a file table (id "files"): per source file its lines with code,
//     lines run, and lines never run, linking to the file's listing;
//   - the function table (id "functions"), when p counted functions:
//     count, name (DisplayName), entry FILE:LINE and, when p has modules,
//     the module; sorted by count, highest first. Clicking a column
//     header sorts by that column (a few lines of inline JavaScript); the
//     page opened with the fragment #sort=COLUMN (count, function,
//     location or module) starts sorted by it;
//   - per source file, in path order, the annotated source (a section
//     with id "file-N", N counting from 1): a row per line (id
//     "file-N-L"), with the count cell empty for a line without code,
//     "#####" for a line with code that never ran, else the count. Rows
//     of lines that ran are shaded by heat (the logarithm of the count
//     against the page's highest count, from pale blue to orange), rows
//     that never ran are red with a red bar in the margin, so they stand
//     out at a glance. The crash line has class "crash" and a marker
//     naming the signal.
//
// When p has branches or calls (--blocks), the file table gets a column
// "branch outcomes taken" ("X of Y": outcomes that happened at least once,
// of two per conditional jump, lcov's BRH of BRF), each file's section a
// summary line ("branches: X of Y outcomes taken; calls: X of Y
// executed", each part when the file has any), and the source table a
// column between the count and the code with a line's jumps and calls in
// address order, as genhtml marks branches: a jump is "[T N]", T for its
// taken outcome and N for its fall-through, each "+" when it happened and
// "-" when not, "[# #]" when the jump never ran; its title gives the counts
// ("taken 12, not taken 0"). A call is "[c]", class "hit" when every call
// returned, "part" when some did not, "miss" (and "[#]") when it never ran;
// its title reads "called 12, returned 11". Without branches and calls the
// page is as before.
//
// Files are grouped as in the file exports: entries of one source file
// from several modules are summed (see exportFiles). Sources are found as
// for Write (opt.SourceDirs, opt.Subst, opt.ReadFile); a source that
// cannot be read is listed by its counted lines only, with a note. File
// names are shown relative to opt.Cwd. Style, Width, Color, Fold and Top
// do not apply. The output depends only on p, opt and the sources.
func WriteHTML(w io.Writer, p *profile.Profile, opt Options) error {
	if p == nil {
		return ErrNilProfile
	}
	if opt.ReadFile == nil {
		opt.ReadFile = os.ReadFile
	}
	r := &report{p: p, opt: &opt, cwd: cleanDir(opt.Cwd)}
	r.header()
	page := htmlPage{
		Title:   strings.TrimSuffix(r.buf.String(), "\n"),
		Modules: len(p.Modules) > 0,
		Notes:   p.Notes,
		Funcs:   p.HasFuncs(),
		Timed:   p.HasTime(),
		Arcs:    len(p.Branches) > 0 || len(p.Calls) > 0,
	}
	files := exportFiles(p)
	var heat htmlHeatScale
	for _, f := range files {
		for _, l := range f.lines {
			heat.maxCount = max(heat.maxCount, l.Count)
			heat.maxTime = max(heat.maxTime, l.TimeNS)
		}
	}
	for i, f := range files {
		page.Files = append(page.Files, r.htmlFileOf(&page, i, f, heat))
	}
	if page.Crash != "" {
		page.CrashText = "crash site: " + r.display(p.Exit.File) + ":" + strconv.Itoa(p.Exit.Line)
	}

	page.Functions = r.htmlFunctions(page.Modules)

	bw := bufio.NewWriter(w)
	if err := htmlTemplate().Execute(bw, &page); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

// An htmlHeatScale is what the rows' heat is measured against: the
// page's highest count and highest sampled time of a line.
type htmlHeatScale struct {
	maxCount, maxTime uint64
}

// htmlFileOf returns the section of f, the i-th file of the page (from
// 0), with a row per line (see WriteHTML). It adds the notes about f's
// source to page, and sets page.Crash when f holds the crash line.
func (r *report) htmlFileOf(page *htmlPage, i int, f *exportFile, heat htmlHeatScale) htmlFile {
	hf := htmlFile{ID: "file-" + strconv.Itoa(i+1), Name: r.display(f.name)}
	counts := make(map[int]uint64, len(f.lines))
	times := make(map[int]timeOf)
	for _, l := range f.lines {
		counts[l.Line] = l.Count
		times[l.Line] = timeOf{l.Samples, l.TimeNS}
		hf.Lines++
		if l.Count > 0 {
			hf.Run++
		} else {
			hf.Never++
		}
	}
	src, found := r.source(f.name)
	if !found {
		page.Notes = append(page.Notes, fmt.Sprintf("source not found: %s (use --source-dir DIR or --subst-path FROM=TO)", f.name))
	}
	rows, last := htmlRowLines(f, len(src), page.Arcs)
	if page.Arcs {
		hf.Summary = htmlArcSummary(f.branches, f.calls)
	}
	if found && last > 0 {
		page.Notes = append(page.Notes, fmt.Sprintf("%s has %d lines but the profile counts line %d: the source has changed since the build", f.name, len(src), last))
	}
	p := r.p
	for _, line := range rows {
		row := htmlRow{ID: hf.ID + "-" + strconv.Itoa(line), Line: line}
		if line <= len(src) {
			row.Text = src[line-1]
		}
		if c, ok := counts[line]; ok {
			switch {
			case c == 0:
				row.Class, row.Count = "never", "#####"
			default:
				row.Class, row.Count = "run", strconv.FormatUint(c, 10)
				row.Style = template.CSS(htmlHeat(c, heat.maxCount))
			}
			if p.HasTime() {
				r.htmlTime(&row, times[line], c, heat.maxTime)
			}
		}
		if page.Arcs {
			row.Arcs = htmlArcs(callsOn(f.calls, line), branchesOn(f.branches, line))
		}
		if p.Exit.Signal != "" && p.Exit.File == f.name && p.Exit.Line == line {
			row.Class += " crash"
			row.Crash = p.Exit.Signal
			page.Crash = "#" + row.ID
		}
		hf.Rows = append(hf.Rows, row)
	}
	return hf
}

// htmlRowLines returns the lines of f's rows, in order: every line of its
// source (srcLines long), then the counted lines past its end (all of
// them when it was not found), so that the page is bounded by the source
// and the profile, whatever the line numbers. With arcs, a jump or call
// filed under a line past the source's end and not counted itself still
// gets its row. last is the last counted line past the source's end, 0
// when there is none.
func htmlRowLines(f *exportFile, srcLines int, arcs bool) (rows []int, last int) {
	rows = make([]int, 0, srcLines+len(f.lines))
	for i := range srcLines {
		rows = append(rows, i+1)
	}
	for _, l := range f.lines { // in line order (exportFiles)
		if l.Line > srcLines {
			rows = append(rows, l.Line)
			last = l.Line
		}
	}
	if !arcs {
		return rows, last
	}
	for _, b := range f.branches {
		if b.Line > srcLines {
			rows = append(rows, b.Line)
		}
	}
	for _, c := range f.calls {
		if c.Line > srcLines {
			rows = append(rows, c.Line)
		}
	}
	slices.Sort(rows)
	return slices.Compact(rows), last
}

// htmlFunctions is the function table of the page: by count, highest
// first, or by time as the terminal's function table is (Options.Sort);
// with the module column when modules is set, and with the time columns
// when the profile has sampled time.
func (r *report) htmlFunctions(modules bool) []htmlFunc {
	var out []htmlFunc
	funcs := slices.Clone(r.p.Functions)
	byTime := r.opt.Sort.resolve(r.p) == KeyTime
	slices.SortFunc(funcs, func(a, b profile.Function) int {
		if byTime && a.TimeNS != b.TimeNS {
			return cmp.Compare(b.TimeNS, a.TimeNS)
		}
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(DisplayName(a.Name), DisplayName(b.Name)),
			strings.Compare(a.Module, b.Module), cmp.Compare(a.Address, b.Address))
	})
	for _, f := range funcs {
		hf := htmlFunc{Count: f.Count, Name: DisplayName(f.Name)}
		if r.timed() {
			hf.Share, hf.PerCall, _ = timeCells(timeOf{f.Samples, f.TimeNS}, f.Count, r.totalSamples())
			hf.Samples = f.Samples
			// The sort keys of the time columns: the share sorts as
			// the samples, the time per call in ns ("" when not called,
			// after every number).
			if f.Count > 0 && f.Samples > 0 {
				hf.PerCallNS = strconv.FormatUint(f.TimeNS/f.Count, 10)
			}
		}
		if f.File != "" {
			hf.Location = r.display(f.File)
			if f.Line > 0 {
				hf.Location += ":" + strconv.Itoa(f.Line)
			}
		}
		if modules {
			hf.Module = r.display(r.p.ModuleName(f.Module))
		}
		out = append(out, hf)
	}
	return out
}

// htmlHeat is the background of a row that ran count times: a hue from
// pale blue (cold) to orange (hot) by the logarithm of count against the
// highest count.
func htmlHeat(count, maxCount uint64) string {
	f := 1.0
	if maxCount > 1 && count < maxCount {
		f = math.Log(float64(count)) / math.Log(float64(maxCount))
	}
	hue := 200 - int(math.Round(f*170)) // 200 (blue) .. 30 (orange)
	light := 92 - int(math.Round(f*22)) // 92% .. 70%
	return fmt.Sprintf("background:hsl(%d,90%%,%d%%)", hue, light)
}

// htmlArcs returns the markers of a line's calls and branches, in address
// order (see WriteHTML).
func htmlArcs(calls []profile.Call, bs []profile.Branch) []htmlArc {
	var out []htmlArc
	for len(calls) > 0 || len(bs) > 0 {
		if len(calls) > 0 && (len(bs) == 0 || calls[0].Address < bs[0].Address) {
			c := calls[0]
			calls = calls[1:]
			a := htmlArc{Class: "call", Title: fmt.Sprintf("called %d, returned %d", c.Count, c.Returned)}
			switch {
			case c.Count == 0:
				a.Marks = []htmlMark{{"miss", "#"}}
			case c.Returned < c.Count:
				a.Marks = []htmlMark{{"part", "c"}}
			default:
				a.Marks = []htmlMark{{"hit", "c"}}
			}
			out = append(out, a)
			continue
		}
		b := bs[0]
		bs = bs[1:]
		a := htmlArc{Class: "branch", Title: fmt.Sprintf("taken %d, not taken %d", b.Taken, b.NotTaken)}
		for _, arc := range gcovArcs(b) {
			switch {
			case b.Taken == 0 && b.NotTaken == 0:
				a.Marks = append(a.Marks, htmlMark{"miss", "#"})
			case arc.n == 0:
				a.Marks = append(a.Marks, htmlMark{"miss", "-"})
			default:
				a.Marks = append(a.Marks, htmlMark{"hit", "+"})
			}
		}
		out = append(out, a)
	}
	return out
}

// htmlArcSummary returns a file's branch and call summary, and its
// branch outcomes taken of those found for the file table (see WriteHTML).
func htmlArcSummary(bs []profile.Branch, calls []profile.Call) htmlSummary {
	var s htmlSummary
	var parts []string
	if len(bs) > 0 {
		found, hit := 0, 0
		for _, b := range bs {
			for _, n := range [2]uint64{b.Taken, b.NotTaken} {
				found++
				if n > 0 {
					hit++
				}
			}
		}
		s.Outcomes = fmt.Sprintf("%d of %d", hit, found)
		s.Missed = hit < found
		parts = append(parts, "branches: "+s.Outcomes+" outcomes taken")
	}
	if len(calls) > 0 {
		run := 0
		for _, c := range calls {
			if c.Count > 0 {
				run++
			}
		}
		parts = append(parts, fmt.Sprintf("calls: %d of %d executed", run, len(calls)))
	}
	s.Text = strings.Join(parts, "; ")
	return s
}

type htmlPage struct {
	Title     string
	Crash     string // the fragment of the crash line, if listed
	CrashText string
	Modules   bool
	Funcs     bool
	Timed     bool // p has sampled time: the function table's time columns
	Arcs      bool // p has branches or calls: the arcs columns
	Files     []htmlFile
	Functions []htmlFunc
	Notes     []string
}

type htmlFile struct {
	ID, Name          string
	Lines, Run, Never int
	Summary           htmlSummary
	Rows              []htmlRow
}

// An htmlSummary is a file's branches and calls, summed up.
type htmlSummary struct {
	Text     string // "branches: X of Y outcomes taken; calls: X of Y executed"
	Outcomes string // "X of Y" for the file table; "" without branches
	Missed   bool   // some outcome never happened
}

// An htmlArc is the marker of one jump or call on a source line.
type htmlArc struct {
	Class, Title string
	Marks        []htmlMark
}

// An htmlMark is one outcome of a jump, or a call, in a marker.
type htmlMark struct {
	Class, Text string
}

type htmlRow struct {
	ID          string
	Line        int
	Count, Text string
	Title       string // the line's sampled time (--time)
	Class       string
	Style       template.CSS
	Crash       string
	Arcs        []htmlArc
}

type htmlFunc struct {
	Count                  uint64
	Name, Location, Module string
	// Share and PerCall are the TIME and PER CALL cells of the terminal's
	// function table (--time); PerCallNS is PER CALL's sort key.
	Share, PerCall, PerCallNS string
	Samples                   uint64
}

// htmlTemplate is parsed at its first use, not at every start of patchprof
// (a quarter of a millisecond).
var htmlTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Parse(htmlSource))
})

const htmlSource = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body { font-family: sans-serif; margin: 1em 2em; color: #222; }
h1 { font-size: 1.2em; font-family: monospace; }
h2 { font-size: 1.05em; font-family: monospace; margin-top: 2em; }
table { border-collapse: collapse; }
#files td, #files th, #functions td, #functions th { padding: 2px 10px; border-bottom: 1px solid #ddd; }
#functions th { cursor: pointer; user-select: none; }
#functions th:hover { background: #eee; }
td.num { text-align: right; font-family: monospace; }
td.name { font-family: monospace; }
td.neverfn { background: #ffb3b3; }
table.src { font-family: monospace; font-size: 13px; width: 100%; }
table.src td { padding: 0 6px; white-space: pre; tab-size: 8; }
table.src td.ln { text-align: right; color: #888; border-right: 1px solid #ccc; }
table.src td.count { text-align: right; min-width: 5em; border-right: 1px solid #ccc; }
tr.never td { background: #ffb3b3; }
tr.never td.ln { border-left: 6px solid #c00000; }
tr.run td.ln { border-left: 6px solid transparent; }
tr.crash td { outline: 2px solid #8000a0; }
span.crash { color: #fff; background: #8000a0; font-weight: bold; padding: 0 4px; margin-left: 1em; }
p.crash a { color: #8000a0; font-weight: bold; }
{{if .Arcs}}table.src td.arcs { border-right: 1px solid #ccc; }
span.hit { color: #007000; font-weight: bold; }
span.miss { color: #c00000; font-weight: bold; }
span.part { color: #b06000; font-weight: bold; }
p.summary { font-family: monospace; }
{{end}}.note { color: #555; }
</style>
</head>
<body>
<h1 id="header">{{.Title}}</h1>
{{if .Crash}}<p class="crash"><a href="{{.Crash}}">{{.CrashText}}</a></p>
{{end}}<table id="files">
<thead><tr><th>file</th><th>lines with code</th><th>run</th><th>never run</th>{{if .Arcs}}<th>branch outcomes taken</th>{{end}}</tr></thead>
<tbody>
{{range .Files}}<tr><td class="name"><a href="#{{.ID}}">{{.Name}}</a></td><td class="num">{{.Lines}}</td><td class="num">{{.Run}}</td><td class="num{{if .Never}} neverfn{{end}}">{{.Never}}</td>{{if $.Arcs}}<td class="num{{if .Summary.Missed}} neverfn{{end}}">{{.Summary.Outcomes}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
{{if .Funcs}}<h2>functions</h2>
<table id="functions">
<thead><tr><th data-key="count" data-num="1">count</th>{{if .Timed}}<th data-key="time" data-num="1">time</th><th data-key="percall" data-num="1">per call</th><th data-key="samples" data-num="1">samples</th>{{end}}<th data-key="function">function</th><th data-key="location">location</th>{{if .Modules}}<th data-key="module">module</th>{{end}}</tr></thead>
<tbody>
{{range .Functions}}<tr><td class="num{{if not .Count}} neverfn{{end}}">{{.Count}}</td>{{if $.Timed}}<td class="num" data-v="{{.Samples}}">{{.Share}}</td><td class="num" data-v="{{.PerCallNS}}">{{.PerCall}}</td><td class="num">{{.Samples}}</td>{{end}}<td class="name">{{.Name}}</td><td class="name">{{.Location}}</td>{{if $.Modules}}<td class="name">{{.Module}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
{{end}}{{range .Files}}<section class="file" id="{{.ID}}">
<h2>{{.Name}}</h2>
{{with .Summary.Text}}<p class="summary">{{.}}</p>
{{end}}<table class="src">
{{range .Rows}}<tr id="{{.ID}}"{{if .Class}} class="{{.Class}}"{{end}}{{if .Style}} style="{{.Style}}"{{end}}><td class="ln">{{.Line}}</td><td class="count"{{if .Title}} title="{{.Title}}"{{end}}>{{.Count}}</td>{{if $.Arcs}}<td class="arcs">{{range .Arcs}}<span class="{{.Class}}" title="{{.Title}}">[{{range $i, $m := .Marks}}{{if $i}} {{end}}<span class="{{$m.Class}}">{{$m.Text}}</span>{{end}}]</span>{{end}}</td>{{end}}<td class="code">{{.Text}}{{if .Crash}}<span class="crash">&lt;&lt;&lt; {{.Crash}}</span>{{end}}</td></tr>
{{end}}</table>
</section>
{{end}}{{range .Notes}}<p class="note">note: {{.}}</p>
{{end}}<script>
(function () {
	var table = document.getElementById("functions");
	if (!table) return;
	var heads = table.tHead.rows[0].cells;
	function sortBy(col, desc) {
		var num = heads[col].dataset.num === "1";
		var body = table.tBodies[0];
		var rows = Array.prototype.slice.call(body.rows);
		rows.sort(function (a, b) {
			// A cell's data-v is its sort key when its text is not a
			// plain number ("75.0%", "3.41ms"); an empty key sorts low.
			var key = function (td) { return td.dataset.v !== undefined ? td.dataset.v : td.textContent; };
			var x = key(a.cells[col]), y = key(b.cells[col]);
			var c = num ? (x === "" ? -1 : Number(x)) - (y === "" ? -1 : Number(y)) : (x < y ? -1 : x > y ? 1 : 0);
			return desc ? -c : c;
		});
		rows.forEach(function (r) { body.appendChild(r); });
		table.dataset.sorted = heads[col].dataset.key + (desc ? "-desc" : "");
	}
	Array.prototype.forEach.call(heads, function (th, col) {
		th.addEventListener("click", function () {
			var key = th.dataset.key;
			sortBy(col, table.dataset.sorted === key ? true : table.dataset.sorted === key + "-desc" ? false : th.dataset.num === "1");
		});
	});
	var m = /sort=(\w+)/.exec(location.hash);
	if (m) {
		Array.prototype.forEach.call(heads, function (th, col) {
			if (th.dataset.key === m[1]) sortBy(col, th.dataset.num === "1");
		});
	}
})();
</script>
</body>
</html>
`
