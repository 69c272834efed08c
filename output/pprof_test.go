package output

import (
	"bytes"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	pprof "github.com/google/pprof/profile"

	"github.com/patchprof/patchprof/profile"
)

const pprofSrc = "/home/ann/prog/a.c"

// pprofExample is a line and function profile of a program whose main
// calls work 1000 times from a loop: a.c:3 is the loop header (entered
// 1000+1 times), a.c:4 the call, a.c:9 a line in never, which is never
// called. Entries are out of canonical order on purpose.
func pprofExample() *profile.Profile {
	return &profile.Profile{
		Version:    profile.Version,
		Executable: "/home/ann/prog/a",
		BuildID:    "4f6c1d0a",
		Args:       []string{"./a", "-n", "1000"},
		Mode:       profile.ModeLinesFuncs,
		Exit:       profile.Exit{Code: intp(0)},
		Lines: []profile.Line{
			{File: pprofSrc, Line: 9, Count: 0},
			{File: pprofSrc, Line: 4, Count: 1000},
			{File: pprofSrc, Line: 3, Count: 1001},
		},
		Functions: []profile.Function{
			{Name: "work", Count: 1000, File: pprofSrc, Line: 7, Address: 0x401160},
			{Name: "never", Count: 0, File: pprofSrc, Line: 9, Address: 0x401190},
			{Name: "main", Count: 1, File: pprofSrc, Line: 2, Address: 0x401126},
		},
		Notes: []string{"1 line-table row dropped: not an instruction start"},
	}
}

// pprofSampleKey names one pprof sample: its only location, by function,
// file, line and address.
type pprofSampleKey struct {
	fn, file string
	line     int64
	addr     uint64
}

// pprofSamples parses a written profile and returns its samples by key,
// failing on a sample with other than one location of one line.
func pprofSamples(t *testing.T, data []byte) (*pprof.Profile, map[pprofSampleKey][]int64) {
	t.Helper()
	prof, err := pprof.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("pprof.Parse: %v", err)
	}
	got := make(map[pprofSampleKey][]int64)
	for _, s := range prof.Sample {
		if len(s.Location) != 1 || len(s.Location[0].Line) != 1 {
			t.Fatalf("sample %v: want one location with one line", s)
		}
		loc := s.Location[0]
		ln := loc.Line[0]
		k := pprofSampleKey{ln.Function.Name, ln.Function.Filename, ln.Line, loc.Address}
		if _, dup := got[k]; dup {
			t.Errorf("two samples at %+v", k)
		}
		got[k] = s.Value
	}
	return prof, got
}

func TestWritePprof(t *testing.T) {
	var buf bytes.Buffer
	if err := WritePprof(&buf, pprofExample()); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte{0x1f, 0x8b}) {
		t.Errorf("output is not gzipped: starts % x", buf.Bytes()[:min(2, buf.Len())])
	}
	prof, got := pprofSamples(t, buf.Bytes())

	var types []string
	for _, st := range prof.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if want := []string{"calls/count", "line_entries/count"}; !slices.Equal(types, want) {
		t.Errorf("sample types %q, want %q", types, want)
	}
	if prof.DefaultSampleType != PprofCalls {
		t.Errorf("default sample type %q, want %q", prof.DefaultSampleType, PprofCalls)
	}
	if prof.PeriodType == nil || prof.PeriodType.Type != "count" || prof.Period != 1 {
		t.Errorf("period %v %d, want count 1", prof.PeriodType, prof.Period)
	}
	if len(prof.Mapping) != 1 {
		t.Fatalf("%d mappings, want 1", len(prof.Mapping))
	}
	m := prof.Mapping[0]
	if m.File != "/home/ann/prog/a" || m.BuildID != "4f6c1d0a" || m.Start != 0 || m.Limit != math.MaxUint64 || m.Offset != 0 ||
		!m.HasFunctions || !m.HasFilenames || !m.HasLineNumbers {
		t.Errorf("mapping %+v", m)
	}
	for _, l := range prof.Location {
		if l.Mapping != m {
			t.Errorf("location %d not in the executable's mapping", l.ID)
		}
	}
	want := map[pprofSampleKey][]int64{
		{"main", pprofSrc, 2, 0x401126}: {1, 0},
		{"work", pprofSrc, 7, 0x401160}: {1000, 0},
		{pprofSrc, pprofSrc, 3, 0}:      {0, 1001},
		{pprofSrc, pprofSrc, 4, 0}:      {0, 1000},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("samples\n got %v\nwant %v", got, want)
	}
	for _, f := range prof.Function {
		if f.Name == "work" && (f.SystemName != "work" || f.StartLine != 7) {
			t.Errorf("function %+v: want system name work, start line 7", f)
		}
	}
	if want := []string{"command: ./a -n 1000", "1 line-table row dropped: not an instruction start"}; !slices.Equal(prof.Comments, want) {
		t.Errorf("comments %q, want %q", prof.Comments, want)
	}
}

func TestWritePprofModes(t *testing.T) {
	for _, tt := range []struct {
		mode    string
		types   []string
		samples int
	}{
		{profile.ModeFuncs, []string{PprofCalls}, 2},
		{profile.ModeLines, []string{PprofLineEntries}, 2},
		{profile.ModeLinesFuncs, []string{PprofCalls, PprofLineEntries}, 4},
	} {
		p := pprofExample()
		p.Mode = tt.mode
		var buf bytes.Buffer
		if err := WritePprof(&buf, p); err != nil {
			t.Fatalf("%s: %v", tt.mode, err)
		}
		prof, got := pprofSamples(t, buf.Bytes())
		var types []string
		for _, st := range prof.SampleType {
			types = append(types, st.Type)
		}
		if !slices.Equal(types, tt.types) {
			t.Errorf("%s: sample types %q, want %q", tt.mode, types, tt.types)
		}
		if len(got) != tt.samples {
			t.Errorf("%s: %d samples, want %d: %v", tt.mode, len(got), tt.samples, got)
		}
		for k, v := range got {
			if len(v) != len(tt.types) || slices.Contains(v, 0) != (len(v) == 2) {
				t.Errorf("%s: sample %+v = %v", tt.mode, k, v)
			}
		}
	}
}

func TestWritePprofDeterministicAndPure(t *testing.T) {
	var first []byte
	for i := range 3 {
		p := pprofExample()
		if i == 1 {
			slices.Reverse(p.Lines)
			slices.Reverse(p.Functions)
		}
		orig := pprofExample()
		if i == 1 {
			slices.Reverse(orig.Lines)
			slices.Reverse(orig.Functions)
		}
		var buf bytes.Buffer
		if err := WritePprof(&buf, p); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p, orig) {
			t.Errorf("run %d: WritePprof modified the profile", i)
		}
		if i == 0 {
			first = buf.Bytes()
		} else if !bytes.Equal(buf.Bytes(), first) {
			t.Errorf("run %d: output differs from run 0", i)
		}
	}
}

func TestWritePprofErrors(t *testing.T) {
	if err := WritePprof(new(bytes.Buffer), nil); !errors.Is(err, ErrNilProfile) {
		t.Errorf("WritePprof(nil) = %v", err)
	}
	if err := WritePprof(failWriter{}, pprofExample()); !errors.Is(err, errWrite) {
		t.Errorf("WritePprof(failing writer) = %v", err)
	}
	huge := pprofExample()
	huge.Lines[1].Count = math.MaxInt64 + 1
	if err := WritePprof(new(bytes.Buffer), huge); !errors.Is(err, ErrCountTooLarge) {
		t.Errorf("WritePprof(line count 2^63) = %v", err)
	}
	huge = pprofExample()
	huge.Functions[0].Count = math.MaxUint64
	if err := WritePprof(new(bytes.Buffer), huge); !errors.Is(err, ErrCountTooLarge) {
		t.Errorf("WritePprof(function count 2^64-1) = %v", err)
	}
	for name, p := range map[string]*profile.Profile{
		"empty":      {},
		"no samples": {Mode: profile.ModeLinesFuncs},
	} {
		var buf bytes.Buffer
		if err := WritePprof(&buf, p); err != nil {
			t.Errorf("%s: %v", name, err)
		} else if _, err := pprof.Parse(&buf); err != nil {
			t.Errorf("%s: output does not parse: %v", name, err)
		}
	}
}

// TestWritePprofGoTool checks the numbers the real consumer, `go tool
// pprof`, prints for a written profile.
func TestWritePprofGoTool(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not in PATH: cannot run go tool pprof")
	}
	file := filepath.Join(t.TempDir(), "a.pb.gz")
	var buf bytes.Buffer
	if err := WritePprof(&buf, pprofExample()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	calls := pprofTop(t, goCmd, "-sample_index="+PprofCalls, "-nodefraction=0", "-top", file)
	if want := map[string]int64{"work": 1000, "main": 1}; !reflect.DeepEqual(calls, want) {
		t.Errorf("calls per function %v, want %v", calls, want)
	}
	// -lines names each row "FUNCTION FILE:LINE"; the function of a line
	// sample is its file.
	lines := pprofTop(t, goCmd, "-sample_index="+PprofLineEntries, "-nodefraction=0", "-top", "-lines", file)
	want := map[string]int64{
		pprofSrc + " " + pprofSrc + ":3": 1001,
		pprofSrc + " " + pprofSrc + ":4": 1000,
	}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("entries per line %v, want %v", lines, want)
	}
	// -list finds the source by the recorded path made relative with
	// -trim_path, under -source_path; testdata/pprof/a.c stands in for it.
	listed := pprofList(t, goCmd, "-sample_index="+PprofLineEntries, "-source_path=testdata/pprof",
		"-trim_path=/home/ann/prog", "-list", `a\.c$`, file)
	if want := map[int]string{1: ".", 2: ".", 3: "1001", 4: "1000", 5: ".", 6: ".", 7: ".", 8: ".", 9: "."}; !reflect.DeepEqual(listed, want) {
		t.Errorf("listed entries per line %v, want %v", listed, want)
	}
}

// runPprof runs `go tool pprof ARGS` and returns its standard output,
// failing the test when it fails.
func runPprof(t *testing.T, goCmd string, args ...string) string {
	t.Helper()
	cmd := exec.Command(goCmd, append([]string{"tool", "pprof"}, args...)...)
	// pprof keeps fetched profiles under PPROF_TMPDIR and looks for
	// binaries under PPROF_BINARY_PATH; keep both inside the test.
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir(), "PPROF_BINARY_PATH="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go tool pprof %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	t.Logf("go tool pprof %s:\n%s", strings.Join(args, " "), stdout.String())
	return stdout.String()
}

// pprofTop runs `go tool pprof ARGS` and returns the flat value of each
// row of its -top table, by row name.
func pprofTop(t *testing.T, goCmd string, args ...string) map[string]int64 {
	t.Helper()
	out := runPprof(t, goCmd, args...)
	// The table follows the column header "flat  flat%  sum%  cum  cum%";
	// each row is those five columns, then the name (which may contain
	// spaces).
	rows := make(map[string]int64)
	inTable := false
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if !inTable {
			inTable = len(f) >= 5 && f[0] == "flat" && f[1] == "flat%"
			continue
		}
		if len(f) < 6 {
			t.Fatalf("go tool pprof %s: bad row %q", strings.Join(args, " "), line)
		}
		flat, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			t.Fatalf("go tool pprof %s: row %q: flat: %v", strings.Join(args, " "), line, err)
		}
		rows[strings.Join(f[5:], " ")] = flat
	}
	if !inTable {
		t.Fatalf("go tool pprof %s: no table in output:\n%s", strings.Join(args, " "), out)
	}
	return rows
}

// pprofListRow is a row of a -list listing: flat, cum, then "LINE:" and
// the source text.
var pprofListRow = regexp.MustCompile(`^\s*(\S+)\s+(\S+)\s+(\d+):`)

// pprofList runs `go tool pprof ARGS` with a -list in ARGS that must match
// exactly one routine, and returns the flat column ("." for none) by
// source line number.
func pprofList(t *testing.T, goCmd string, args ...string) map[int]string {
	t.Helper()
	out := runPprof(t, goCmd, args...)
	if n := strings.Count(out, "ROUTINE ="); n != 1 {
		t.Fatalf("go tool pprof %s: %d routines listed, want 1", strings.Join(args, " "), n)
	}
	rows := make(map[int]string)
	for line := range strings.Lines(out) {
		m := pprofListRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[3])
		if err != nil {
			t.Fatalf("go tool pprof %s: row %q: %v", strings.Join(args, " "), line, err)
		}
		rows[n] = m[1]
	}
	return rows
}

// TestWritePprofModules checks that each module gets its own mapping with
// its path and build ID, that every sample sits in the mapping of its
// module, and that go tool pprof reads the result: the call counts of
// unused in the library (2) and the executable (0, left out), and b.c's
// entries summed over both modules per line.
func TestWritePprofModules(t *testing.T) {
	var buf bytes.Buffer
	if err := WritePprof(&buf, twoModules()); err != nil {
		t.Fatal(err)
	}
	prof, err := pprof.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	type mapping struct {
		id            uint64
		file, buildID string
	}
	var maps []mapping
	for _, m := range prof.Mapping {
		maps = append(maps, mapping{m.ID, m.File, m.BuildID})
	}
	if want := []mapping{{1, dir + "/a", "aaaa0001"}, {2, dir + "/libb.so", "bbbb0002"}}; !slices.Equal(maps, want) {
		t.Errorf("mappings %v, want %v", maps, want)
	}
	type sample struct {
		mapping uint64
		name    string
		line    int64
		value   []int64
	}
	var got []sample
	for _, s := range prof.Sample {
		l := s.Location[0]
		got = append(got, sample{l.Mapping.ID, l.Line[0].Function.Name, l.Line[0].Line, s.Value})
	}
	want := []sample{
		{1, "sq", 3, []int64{5, 0}},
		{1, "main", 8, []int64{1, 0}},
		{2, "_init", 0, []int64{1, 0}},
		{2, "unused", 1, []int64{2, 0}},
		{1, dir + "/a.c", 3, []int64{0, 5}},
		{1, dir + "/a.c", 5, []int64{0, 5}},
		{1, dir + "/a.c", 8, []int64{0, 1}},
		{1, dir + "/a.c", 10, []int64{0, 1}},
		{2, dir + "/b.c", 1, []int64{0, 2}},
		{2, dir + "/b.c", 3, []int64{0, 2}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("samples\n got %v\nwant %v", got, want)
	}

	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not in PATH: cannot run go tool pprof")
	}
	file := filepath.Join(t.TempDir(), "m.pb.gz")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := pprofTop(t, goCmd, "-sample_index="+PprofCalls, "-nodefraction=0", "-top", file)
	if want := map[string]int64{"sq": 5, "unused": 2, "main": 1, "_init": 1}; !reflect.DeepEqual(calls, want) {
		t.Errorf("calls per function %v, want %v", calls, want)
	}
	lines := pprofTop(t, goCmd, "-sample_index="+PprofLineEntries, "-nodefraction=0", "-top", file)
	if want := map[string]int64{dir + "/a.c": 12, dir + "/b.c": 4}; !reflect.DeepEqual(lines, want) {
		t.Errorf("entries per file %v, want %v", lines, want)
	}
}

// TestWritePprofBlocks: a --blocks profile gains the block_entries sample
// type, a sample per executed block at its address in its function, and
// go tool pprof sums them per function.
func TestWritePprofBlocks(t *testing.T) {
	p := pprofExample()
	p.Mode = profile.ModeLinesFuncs
	p.Blocks = []profile.Block{
		{Address: 0x401160, End: 0x401170, Function: 0x401160, Count: 1000},
		{Address: 0x401170, End: 0x401180, Function: 0x401160, Count: 400},
		{Address: 0x401180, End: 0x401188, Function: 0x401160, Count: 0},
		{Address: 0x401126, End: 0x401140, Function: 0x401126, Count: 1},
	}
	var buf bytes.Buffer
	if err := WritePprof(&buf, p); err != nil {
		t.Fatal(err)
	}
	prof, err := pprof.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	// The calls sample of a function and its first block's sample share
	// a location: sum the block values by key.
	got := map[pprofSampleKey]int64{}
	for _, sm := range prof.Sample {
		loc := sm.Location[0]
		ln := loc.Line[0]
		got[pprofSampleKey{ln.Function.Name, ln.Function.Filename, ln.Line, loc.Address}] += sm.Value[2]
	}
	var types []string
	for _, st := range prof.SampleType {
		types = append(types, st.Type)
	}
	if want := []string{PprofCalls, PprofLineEntries, PprofBlockEntries}; !slices.Equal(types, want) {
		t.Fatalf("sample types %v, want %v", types, want)
	}
	for k, want := range map[pprofSampleKey]int64{
		{"work", pprofSrc, 7, 0x401160}: 1000,
		{"work", pprofSrc, 7, 0x401170}: 400,
		{"main", pprofSrc, 2, 0x401126}: 1,
	} {
		if v := got[k]; v != want {
			t.Errorf("block entries at %+v: %d, want %d", k, v, want)
		}
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not in PATH: cannot run go tool pprof")
	}
	file := filepath.Join(t.TempDir(), "b.pb.gz")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	top := pprofTop(t, goCmd, "-sample_index="+PprofBlockEntries, "-nodefraction=0", "-top", file)
	if want := map[string]int64{"work": 1400, "main": 1}; !reflect.DeepEqual(top, want) {
		t.Errorf("block entries per function %v, want %v", top, want)
	}
}
