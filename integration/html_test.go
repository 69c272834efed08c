//go:build linux

package integration

import (
	"bytes"
	"context"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mustHaveChromium returns the path of Chromium (Debian package chromium,
// installed by .ci/run), skipping the test when it is not installed.
func mustHaveChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium not in PATH (Debian package chromium): cannot check the HTML report in a browser")
	return ""
}

// chromium runs headless Chromium with args and the page URL, and returns
// its standard output. Its profile directory and home are kept in the
// test's temporary directory.
func chromium(t *testing.T, bin, url string, args ...string) string {
	t.Helper()
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir=" + filepath.Join(home, "profile")}, args...)
	cmd := exec.CommandContext(ctx, bin, append(all, url)...)
	cmd.Env = append(os.Environ(), "HOME="+home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(cmd.Args[1:], " "), err, tail(stderr.String()))
	}
	return stdout.String()
}

// domRow matches a source row of the report as Chromium serializes it.
var domRow = regexp.MustCompile(`<tr id="file-(\d+)-(\d+)"(?: class="([^"]*)")?[^>]*><td class="ln">\d+</td><td class="count">([^<]*)</td><td class="code">(.*?)</td></tr>`)

// domFunc matches a row of the function table.
var domFunc = regexp.MustCompile(`<tr><td class="num[^"]*">(\d+)</td><td class="name">([^<]*)</td>`)

// TestHTMLInChromium runs crash.c (a loop of 10, then a SIGSEGV) under
// patchprof writing the HTML report directly, opens the page in headless
// Chromium and checks the DOM Chromium built: every line's count cell
// equals the saved profile's count of that line (empty for lines without
// code, ##### for lines that never ran, which have class "never"), the
// loop body shows 10, the crash line is marked with SIGSEGV and linked
// from the top of the page, the function table lists crash and main with
// 1 call, and its inline script sorts the table by name when the page is
// opened with #sort=function. It saves a screenshot beside the page.
func TestHTMLInChromium(t *testing.T) {
	needs(t)
	bin := mustHaveChromium(t)
	exe := buildC(t, "crash.c", "-g", "-O0")
	dir := t.TempDir()
	page, saved := filepath.Join(dir, "report.html"), filepath.Join(dir, "p.json")
	res := run(t, runOpts{args: []string{"--lines", "--funcs", "--format", "html", "-o", page, "--save", saved, exe, "segv"}})
	if res.code != 139 {
		t.Fatalf("%s: exit code %d, want 139\n%s", res.cmdline, res.code, tail(res.stderr))
	}
	p, err := readProfile(saved)
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(testdataDir, "crash.c")
	loop, segv, fpe := markerLine(t, "crash.c", "LOOP_BODY"), markerLine(t, "crash.c", "SEGV_LINE"), markerLine(t, "crash.c", "FPE_LINE")

	dom := chromium(t, bin, "file://"+page+"#sort=function", "--dump-dom")
	if !strings.Contains(dom, `<h1 id="header">patchprof: `) || !strings.Contains(dom, "killed by SIGSEGV") {
		t.Fatalf("the page's header does not say SIGSEGV:\n%s", tail(dom))
	}

	// The section of crash.c, by its heading.
	secRE := regexp.MustCompile(`<section class="file" id="(file-\d+)">\s*<h2>([^<]*)</h2>`)
	fileID := ""
	for _, m := range secRE.FindAllStringSubmatch(dom, -1) {
		if filepath.Base(html.UnescapeString(m[2])) == "crash.c" {
			fileID = m[1]
		}
	}
	if fileID == "" {
		t.Fatalf("no section for crash.c in the DOM:\n%s", tail(dom))
	}
	type cell struct {
		class, count, code string
	}
	rows := map[int]cell{}
	for _, m := range domRow.FindAllStringSubmatch(dom, -1) {
		if "file-"+m[1] != fileID {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		rows[n] = cell{m[3], m[4], m[5]}
	}
	lines := sourceLines(t, src)
	if len(rows) != len(lines) {
		t.Fatalf("the page lists %d rows of crash.c, the source has %d lines", len(rows), len(lines))
	}
	want := linesOf(p, "crash.c")
	for n := 1; n <= len(lines); n++ {
		c := rows[n]
		wantCount, wantClass := "", ""
		if count, ok := want[n]; ok {
			wantCount, wantClass = strconv.FormatInt(count, 10), "run"
			if count == 0 {
				wantCount, wantClass = "#####", "never"
			}
		}
		if c.count != wantCount || strings.Fields(c.class + " x")[0] != strings.Fields(wantClass + " x")[0] {
			t.Errorf("crash.c:%d: count cell %q class %q, want %q class %q (the saved profile's count)", n, c.count, c.class, wantCount, wantClass)
		}
		// The page expands tabs; compare the words.
		text, _, _ := strings.Cut(c.code, `<span class="crash">`)
		if got, want := strings.Fields(html.UnescapeString(text)), strings.Fields(lines[n-1]); !slices.Equal(got, want) {
			t.Errorf("crash.c:%d: source %q, want %q", n, text, lines[n-1])
		}
	}
	if rows[loop].count != "10" {
		t.Errorf("loop body crash.c:%d shows %q, want 10", loop, rows[loop].count)
	}
	if rows[fpe].count != "#####" || rows[fpe].class != "never" {
		t.Errorf("crash.c:%d (never run) shows %q with class %q, want ##### and never", fpe, rows[fpe].count, rows[fpe].class)
	}
	if rows[segv].count != "1" || !strings.Contains(rows[segv].class, "crash") ||
		!strings.Contains(rows[segv].code, `<span class="crash">&lt;&lt;&lt; SIGSEGV</span>`) {
		t.Errorf("crash line crash.c:%d: %+v, want count 1, class crash and the SIGSEGV marker", segv, rows[segv])
	}
	crashLink := `<a href="#` + fileID + "-" + strconv.Itoa(segv) + `">crash site: `
	if !strings.Contains(dom, crashLink) {
		t.Errorf("no link %q to the crash line in the DOM", crashLink)
	}

	// The function table, as the inline script sorted it: by name.
	table := dom[strings.Index(dom, `<table id="functions"`):]
	table = table[:strings.Index(table, "</table>")]
	if !strings.Contains(table, `data-sorted="function"`) {
		t.Errorf("the function table was not sorted by the page's script (#sort=function):\n%s", table)
	}
	calls := map[string]string{}
	var names []string
	for _, m := range domFunc.FindAllStringSubmatch(table, -1) {
		calls[m[2]] = m[1]
		names = append(names, m[2])
	}
	if calls["crash"] != "1" || calls["main"] != "1" {
		t.Errorf("function table: crash %q main %q calls, want 1 and 1 (%v)", calls["crash"], calls["main"], calls)
	}
	for i := 1; i < len(names); i++ {
		if names[i-1] > names[i] {
			t.Errorf("function table not in name order after #sort=function: %q before %q", names[i-1], names[i])
		}
	}

	shot := filepath.Join(dir, "report.png")
	chromium(t, bin, "file://"+page, "--screenshot="+shot, "--window-size=1200,1600", "--hide-scrollbars")
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 10000 {
		t.Errorf("screenshot %s is not a PNG of a rendered page (%d bytes)", shot, len(png))
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))
}
