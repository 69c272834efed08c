//go:build linux

package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The saved profile (docs/profile-format.md), decoded with our own structs
// so the tests hold patchprof to the documented format, not to its code.
// Unknown fields are ignored.

type profile struct {
	Version    int               `json:"version"`
	Executable string            `json:"executable"`
	BuildID    string            `json:"build_id"`
	Args       []string          `json:"args"`
	Mode       string            `json:"mode"`
	Exit       exitInfo          `json:"exit"`
	Lines      []lineEntry       `json:"lines"`
	Functions  []funcEntry       `json:"functions"`
	Sites      []siteEntry       `json:"sites"`
	Dropped    []json.RawMessage `json:"dropped"`
	Notes      []string          `json:"notes"`
	Modules    []moduleEntry     `json:"modules"`
}

type moduleEntry struct {
	Path    string `json:"path"`
	BuildID string `json:"build_id"`
	Kind    string `json:"kind"`
}

type exitInfo struct {
	Code         *int   `json:"code"`
	Detached     bool   `json:"detached"`
	Running      bool   `json:"running"`
	Signal       string `json:"signal"`
	FaultAddress string `json:"fault_address"`
	PC           string `json:"pc"`
	Function     string `json:"function"`
	File         string `json:"file"`
	Line         int    `json:"line"`
	Module       string `json:"module"`
}

func (e exitInfo) String() string {
	var b strings.Builder
	if e.Code != nil {
		fmt.Fprintf(&b, "code %d", *e.Code)
	} else {
		b.WriteString("no code")
	}
	fmt.Fprintf(&b, ", signal %q, fault_address %q, pc %q, in %q at %s:%d",
		e.Signal, e.FaultAddress, e.PC, e.Function, e.File, e.Line)
	return b.String()
}

type lineEntry struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Count  int64  `json:"count"`
	Module string `json:"module"`
}

type funcEntry struct {
	Name    string `json:"name"`
	Count   int64  `json:"count"`
	File    string `json:"file"`
	Line    int    `json:"line"`
	Address string `json:"address"`
	Module  string `json:"module"`
}

type siteEntry struct {
	Address string `json:"address"`
	Count   int64  `json:"count"`
	Kind    string `json:"kind"`
	Module  string `json:"module"`
}

func readProfile(path string) (*profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// Required fields are present, and required lists are [] when empty,
	// not null (docs/profile-format.md).
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", path, err, tail(string(b)))
	}
	for _, f := range []string{"version", "executable", "args", "mode", "exit", "lines", "functions", "sites"} {
		v, ok := raw[f]
		if !ok {
			return nil, fmt.Errorf("%s: required field %q missing", path, f)
		}
		if string(v) == "null" {
			return nil, fmt.Errorf("%s: required field %q is null", path, f)
		}
	}
	var p profile
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", path, err, tail(string(b)))
	}
	if p.Version != 3 {
		return nil, fmt.Errorf("%s: version %d, want 3", path, p.Version)
	}
	return &p, nil
}

// lineCount is the count of fileBase:line in p (summed over entries whose
// file has that base name) and whether p has the line at all.
func lineCount(p *profile, fileBase string, line int) (int64, bool) {
	var n int64
	found := false
	for _, l := range p.Lines {
		if l.Line == line && filepath.Base(l.File) == fileBase {
			n += l.Count
			found = true
		}
	}
	return n, found
}

// linesOf maps line numbers of fileBase to their counts in p.
func linesOf(p *profile, fileBase string) map[int]int64 {
	m := make(map[int]int64)
	for _, l := range p.Lines {
		if filepath.Base(l.File) == fileBase {
			m[l.Line] += l.Count
		}
	}
	return m
}

// funcCount is the count of the function named name in p and whether p has
// the function at all.
func funcCount(p *profile, name string) (int64, bool) {
	var n int64
	found := false
	for _, f := range p.Functions {
		if f.Name == name {
			n += f.Count
			found = true
		}
	}
	return n, found
}

// funcByName returns p's entry for the function name.
func funcByName(p *profile, name string) (funcEntry, bool) {
	for _, f := range p.Functions {
		if f.Name == name {
			return f, true
		}
	}
	return funcEntry{}, false
}

// wantLine checks that fileBase:line counted exactly want.
func wantLine(t testing.TB, p *profile, fileBase string, line int, want int64) {
	t.Helper()
	got, ok := lineCount(p, fileBase, line)
	if !ok {
		t.Errorf("%s:%d: not in the profile, want count %d", fileBase, line, want)
		return
	}
	if got != want {
		t.Errorf("%s:%d: count %d, want %d", fileBase, line, got, want)
	}
}

// wantFunc checks that function name counted exactly want.
func wantFunc(t testing.TB, p *profile, name string, want int64) {
	t.Helper()
	got, ok := funcCount(p, name)
	if !ok {
		t.Errorf("function %s: not in the profile, want count %d", name, want)
		return
	}
	if got != want {
		t.Errorf("function %s: count %d, want %d", name, got, want)
	}
}

// wantExitCode checks the exit code of patchprof and of the saved profile.
func wantExitCode(t testing.TB, res result, p *profile, want int) {
	t.Helper()
	if res.code != want {
		t.Errorf("%s: exit code %d, want %d\nstderr:\n%s", res.cmdline, res.code, want, tail(res.stderr))
	}
	if p == nil {
		return
	}
	if p.Exit.Code == nil || *p.Exit.Code != want || p.Exit.Signal != "" {
		t.Errorf("saved exit: %v; want code %d and no signal", p.Exit, want)
	}
}

// Source markers: target programs tag lines with /* NAME */ or // NAME
// comments, so tests don't hard-code line numbers.

// markerLine is the 1-based line of testdata/src holding the comment marker.
func markerLine(t testing.TB, src, marker string) int {
	t.Helper()
	return markerLineIn(t, filepath.Join(testdataDir, src), marker)
}

func markerLineIn(t testing.TB, path, marker string) int {
	t.Helper()
	lines := sourceLines(t, path)
	found := 0
	for i, l := range lines {
		if strings.Contains(l, "/* "+marker+" */") || strings.HasSuffix(strings.TrimSpace(l), "// "+marker) {
			if found != 0 {
				t.Fatalf("%s: marker %s on lines %d and %d", path, marker, found, i+1)
			}
			found = i + 1
		}
	}
	if found == 0 {
		t.Fatalf("%s: no marker %s", path, marker)
	}
	return found
}

// sourceLines returns the lines of a file; index i holds line i+1.
func sourceLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// The report.

// listingLine is one `FILE LINE COUNT: SOURCE` line of the listing.
type listingLine struct {
	File   string
	Line   int
	Count  string // "" for no code, "#####" for never run, else the number
	Source string // the text after the colon, marker included
}

var listingRE = regexp.MustCompile(`^(\S+)\s+(\d+)\s*(#####|\d+)?\s*:(.*)$`)

// parseListing picks the listing lines out of a report.
func parseListing(report string) []listingLine {
	var ls []listingLine
	sc := bufio.NewScanner(strings.NewReader(report))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := listingRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		ls = append(ls, listingLine{File: m[1], Line: n, Count: m[3], Source: strings.TrimPrefix(m[4], " ")})
	}
	return ls
}

// findListing returns the listing line for fileBase:line.
func findListing(ls []listingLine, fileBase string, line int) (listingLine, bool) {
	for _, l := range ls {
		if l.Line == line && filepath.Base(l.File) == fileBase {
			return l, true
		}
	}
	return listingLine{}, false
}

// readFile returns a file's contents or fails the test.
func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
