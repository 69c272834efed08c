package output

import (
	"bytes"
	"strings"
	"testing"

	"github.com/patchprof/patchprof/profile"
)

func TestWriteHTMLGolden(t *testing.T) {
	missing := bishop()
	missing.Lines = append(missing.Lines, profile.Line{File: "/build/gone/lib.c", Line: 3, Count: 0},
		profile.Line{File: "/build/gone/lib.c", Line: 40, Count: 2})
	missing.Notes = []string{"2 line-table rows dropped: <not> an instruction start"}
	for _, tc := range []struct {
		name string
		p    *profile.Profile
	}{
		{"crash", crashProfile()},
		{"lines", missing},
		{"modules", twoModules()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ffs := newFakeFS(t)
			ffs.files[dir+"/a.c"] = "=" + exportSources["a.c"]
			ffs.files[dir+"/b.c"] = "=" + exportSources["b.c"]
			var buf bytes.Buffer
			if err := WriteHTML(&buf, tc.p, Options{Cwd: dir, ReadFile: ffs.ReadFile}); err != nil {
				t.Fatal(err)
			}
			got := buf.String()
			checkGolden(t, "html/"+tc.name+".html", got)
			for _, ref := range []string{"src=", "href=\"http", "@import", "url("} {
				if strings.Contains(got, ref) {
					t.Errorf("the page refers to an outside resource (%q): it must be self-contained", ref)
				}
			}
		})
	}
	if err := WriteHTML(&bytes.Buffer{}, nil, Options{}); err != ErrNilProfile {
		t.Errorf("WriteHTML(nil) = %v, want ErrNilProfile", err)
	}
}

func TestHTMLHeat(t *testing.T) {
	for _, tc := range []struct {
		count, max uint64
		want       string
	}{
		{1, 1000, "background:hsl(200,90%,92%)"},
		{1000, 1000, "background:hsl(30,90%,70%)"},
		{1, 1, "background:hsl(30,90%,70%)"},
	} {
		if got := htmlHeat(tc.count, tc.max); got != tc.want {
			t.Errorf("htmlHeat(%d, %d) = %q, want %q", tc.count, tc.max, got, tc.want)
		}
	}
}

// TestWriteHTMLBranches renders blocksProfile with two calls added: the
// page marks each line's jumps and calls in address order and sums them up
// per file; without branches and calls it has none of that.
func TestWriteHTMLBranches(t *testing.T) {
	p := blocksProfile()
	f := "/src/count.c"
	p.Calls = []profile.Call{
		{File: f, Line: 9, Address: 0x1048, Count: 1, Returned: 0}, // before line 9's jump
		{File: f, Line: 4, Address: 0x1004, Count: 0},
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, p, Options{ReadFile: blocksReadFile, Cwd: "/src"}); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	checkGolden(t, "blocks/html.golden", got)
	for _, want := range []string{
		`<th>branch outcomes taken</th>`,
		`<td class="num neverfn">6 of 8</td>`,
		`<p class="summary">branches: 6 of 8 outcomes taken; calls: 1 of 2 executed</p>`,
		`<td class="count">1</td><td class="arcs"><span class="call" title="called 0, returned 0">[<span class="miss">#</span>]</span></td>`,
		`<td class="count">11</td><td class="arcs"><span class="branch" title="taken 10, not taken 1">[<span class="hit">&#43;</span> <span class="hit">&#43;</span>]</span></td>`,
		// Line 7's two jumps, in address order.
		`<td class="count">10</td><td class="arcs"><span class="branch" title="taken 2, not taken 3">[<span class="hit">&#43;</span> <span class="hit">&#43;</span>]</span>` +
			`<span class="branch" title="taken 5, not taken 5">[<span class="hit">&#43;</span> <span class="hit">&#43;</span>]</span></td>`,
		`<td class="count">1</td><td class="arcs"><span class="call" title="called 1, returned 0">[<span class="part">c</span>]</span>` +
			`<span class="branch" title="taken 0, not taken 0">[<span class="miss">#</span> <span class="miss">#</span>]</span></td>`,
		`<td class="count">3</td><td class="arcs"></td>`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the page lacks %s", want)
		}
	}

	p.Branches[1].NotTaken = 0 // line 6: [+ -] (html/template writes + as &#43;)
	buf.Reset()
	if err := WriteHTML(&buf, p, Options{ReadFile: blocksReadFile, Cwd: "/src"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<span class="branch" title="taken 10, not taken 0">[<span class="hit">&#43;</span> <span class="miss">-</span>]</span>`,
		`branches: 5 of 8 outcomes taken`,
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the page lacks %s", want)
		}
	}

	p.Branches, p.Calls = nil, nil
	buf.Reset()
	if err := WriteHTML(&buf, p, Options{ReadFile: blocksReadFile, Cwd: "/src"}); err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"arcs", "summary", "branch", "span.hit"} {
		if strings.Contains(buf.String(), absent) {
			t.Errorf("a page without branches or calls has %q", absent)
		}
	}
}

// TestWriteHTMLTime: with sampled time the function table has the
// terminal table's TIME, PER CALL and SAMPLES cells (with their sort keys)
// and is sorted by time; without time it has none of them.
func TestWriteHTMLTime(t *testing.T) {
	p := blocksProfile()
	p.Time = &profile.Time{Rate: 997, Samples: 400, TimeNS: 400_000_000}
	p.Functions = append(p.Functions, profile.Function{Name: "hot", Count: 2, File: "/src/count.c", Line: 3, Address: 0x1200, Samples: 300, TimeNS: 300_000_000})
	p.Functions[0].Samples, p.Functions[0].TimeNS = 10, 10_000_000
	var buf bytes.Buffer
	if err := WriteHTML(&buf, p, Options{ReadFile: blocksReadFile, Cwd: "/src"}); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	table := got[strings.Index(got, `<table id="functions">`):]
	table = table[:strings.Index(table, "</table>")]
	want := `<thead><tr><th data-key="count" data-num="1">count</th><th data-key="time" data-num="1">time</th><th data-key="percall" data-num="1">per call</th><th data-key="samples" data-num="1">samples</th><th data-key="function">function</th><th data-key="location">location</th></tr></thead>
<tbody>
<tr><td class="num">2</td><td class="num" data-v="300">75.0%</td><td class="num" data-v="150000000">150ms</td><td class="num">300</td><td class="name">hot</td><td class="name">count.c:3</td></tr>
<tr><td class="num">1</td><td class="num" data-v="10">~2.5%</td><td class="num" data-v="10000000">~10.0ms</td><td class="num">10</td><td class="name">count</td><td class="name">count.c:3</td></tr>
<tr><td class="num neverfn">0</td><td class="num" data-v="0">-</td><td class="num" data-v=""></td><td class="num">0</td><td class="name">unused</td><td class="name">count.c:3</td></tr>
</tbody>
`
	if !strings.HasSuffix(table, want) {
		t.Errorf("function table:\n%s\nwant it to end with:\n%s", table, want)
	}
	// --sort count keeps the count order: count (1 call) after hot (2) is
	// the same here, so sort a profile where they differ.
	p.Functions[2].Count = 0
	buf.Reset()
	if err := WriteHTML(&buf, p, Options{ReadFile: blocksReadFile, Cwd: "/src", Sort: KeyCount}); err != nil {
		t.Fatal(err)
	}
	if i, j := strings.Index(buf.String(), `<td class="name">count</td>`), strings.Index(buf.String(), `<td class="name">hot</td>`); i < 0 || j < i {
		t.Errorf("--sort count: count at %d, hot at %d; want count (1 call) first", i, j)
	}
	buf.Reset()
	if err := WriteHTML(&buf, blocksProfile(), Options{ReadFile: blocksReadFile, Cwd: "/src"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `data-key="time"`) || strings.Contains(buf.String(), "data-v=") {
		t.Errorf("time columns in a page without time:\n%s", buf.String())
	}
}
