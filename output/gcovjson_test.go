package output

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/patchprof/patchprof/profile"
)

// gunzipJSON decompresses a WriteGcovJSON output and indents it for a
// readable golden file.
func gunzipJSON(t *testing.T, b []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, raw)
	}
	return out.String() + "\n"
}

func TestWriteGcovJSONGolden(t *testing.T) {
	funcsOnly := exportProfile(dir)
	funcsOnly.Mode, funcsOnly.Lines = profile.ModeFuncs, []profile.Line{}
	linesOnly := exportProfile(dir)
	linesOnly.Mode, linesOnly.Functions = profile.ModeLines, []profile.Function{}
	for _, tc := range []struct {
		golden string
		p      *profile.Profile
	}{
		{"gcovjson/lines_funcs.json", exportProfile(dir)},
		{"gcovjson/funcs.json", funcsOnly},
		{"gcovjson/lines.json", linesOnly},
		{"gcovjson/modules.json", twoModules()},
		{"gcovjson/empty.json", &profile.Profile{Executable: "/bin/x", Mode: profile.ModeLinesFuncs}},
		{"gcovjson/blocks.json", blocksProfile()},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteGcovJSON(&b, tc.p, GcovJSONOptions{Cwd: dir}); err != nil {
				t.Fatal(err)
			}
			got := gunzipJSON(t, b.Bytes())
			checkGolden(t, tc.golden, got)
			rev := *tc.p
			rev.Lines, rev.Functions = slices.Clone(tc.p.Lines), slices.Clone(tc.p.Functions)
			slices.Reverse(rev.Lines)
			slices.Reverse(rev.Functions)
			var b2 bytes.Buffer
			if err := WriteGcovJSON(&b2, &rev, GcovJSONOptions{Cwd: dir}); err != nil {
				t.Fatal(err)
			}
			if d := unifiedDiff("in order", "reversed", got, gunzipJSON(t, b2.Bytes())); d != "" {
				t.Errorf("output depends on the order of the profile's slices:\n%s", d)
			}
		})
	}
	if err := WriteGcovJSON(io.Discard, nil, GcovJSONOptions{}); err != ErrNilProfile {
		t.Errorf("WriteGcovJSON(nil) = %v, want ErrNilProfile", err)
	}
}

// keysOf returns the sorted keys of every object at each JSON path of v
// ("", "files[]", "files[].lines[]", ...), merged over array elements.
func keysOf(v any, path string, into map[string][]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if !slices.Contains(into[path], k) {
				into[path] = append(into[path], k)
			}
			keysOf(e, path+"."+k, into)
		}
		sort.Strings(into[path])
	case []any:
		for _, e := range v {
			keysOf(e, path+"[]", into)
		}
	}
}

// TestWriteGcovJSONMatchesGcov checks WriteGcovJSON against gcov itself,
// the format's own writer (gcovr 5.2, in Debian 12, reads only gcov's text
// format, so it cannot be the consumer here). It builds testdata/gcov/prog.c
// with gcc --coverage -O0, runs it, runs `gcov --json-format prog.c`, turns
// the counts gcov wrote into a profile, and requires WriteGcovJSON's
// document to have exactly gcov's keys at every level and, per line and
// per function, gcov's values. The allowed differences are what patchprof
// cannot know: gcc_version, data_file, columns, end_line, blocks and
// blocks_executed.
func TestWriteGcovJSONMatchesGcov(t *testing.T) {
	work, run := coverageRun(t)
	prog := filepath.Join(work, "prog.c")
	run("gcov", "--json-format", "prog.c")
	gz, err := os.ReadFile(filepath.Join(work, "prog.gcov.json.gz"))
	if err != nil {
		t.Fatalf("gcov --json-format wrote no prog.gcov.json.gz: %v", err)
	}
	var ref gcovJSON
	refText := gunzipJSON(t, gz)
	if err := json.Unmarshal([]byte(refText), &ref); err != nil {
		t.Fatal(err)
	}
	if ref.FormatVersion != GcovJSONFormatVersion || len(ref.Files) != 1 {
		t.Fatalf("gcov wrote format_version %q with %d files, want %q and 1:\n%s",
			ref.FormatVersion, len(ref.Files), GcovJSONFormatVersion, refText)
	}
	if len(ref.Files[0].Lines) < 10 || len(ref.Files[0].Functions) != 4 {
		t.Fatalf("gcov reported %d lines and %d functions, want >= 10 and 4:\n%s",
			len(ref.Files[0].Lines), len(ref.Files[0].Functions), refText)
	}

	p := &profile.Profile{Executable: filepath.Join(work, "prog"), Mode: profile.ModeLinesFuncs}
	for i, fn := range ref.Files[0].Functions {
		p.Functions = append(p.Functions, profile.Function{Name: fn.Name, Count: fn.ExecutionCount,
			File: prog, Line: fn.StartLine, Address: profile.Address(0x401000 + uint64(16*i))})
	}
	for _, l := range ref.Files[0].Lines {
		p.Lines = append(p.Lines, profile.Line{File: prog, Line: l.LineNumber, Count: l.Count})
	}
	var b bytes.Buffer
	if err := WriteGcovJSON(&b, p, GcovJSONOptions{Cwd: work}); err != nil {
		t.Fatal(err)
	}
	gotText := gunzipJSON(t, b.Bytes())
	var got gcovJSON
	if err := json.Unmarshal([]byte(gotText), &got); err != nil {
		t.Fatal(err)
	}

	var refAny, gotAny any
	json.Unmarshal([]byte(refText), &refAny)
	json.Unmarshal([]byte(gotText), &gotAny)
	refKeys, gotKeys := map[string][]string{}, map[string][]string{}
	keysOf(refAny, "", refKeys)
	keysOf(gotAny, "", gotKeys)
	for path, keys := range refKeys {
		if !slices.Equal(gotKeys[path], keys) {
			t.Errorf("keys at %q: got %v, gcov writes %v", path, gotKeys[path], keys)
		}
	}
	for path := range gotKeys {
		if _, ok := refKeys[path]; !ok {
			t.Errorf("keys at %q: got %v, gcov writes no such object", path, gotKeys[path])
		}
	}

	if got.FormatVersion != ref.FormatVersion || got.Cwd != work || len(got.Files) != 1 || got.Files[0].File != prog {
		t.Fatalf("header or files differ from gcov's:\n%s", gotText)
	}
	// gcov names the file as the compiler saw it (here absolute).
	if ref.Files[0].File != "prog.c" && ref.Files[0].File != prog {
		t.Errorf("gcov names the source %q, want prog.c or %s", ref.Files[0].File, prog)
	}
	type line struct {
		number    int
		function  string
		count     uint64
		unexec    bool
		nBranches int
	}
	lines := func(ls []gcovJSONLine) []line {
		var out []line
		for _, l := range ls {
			out = append(out, line{l.LineNumber, l.FunctionName, l.Count, l.UnexecutedBlock, len(l.Branches)})
		}
		return out
	}
	if g, r := lines(got.Files[0].Lines), lines(ref.Files[0].Lines); !slices.Equal(g, r) {
		t.Errorf("lines differ from gcov's:\n got %+v\nwant %+v", g, r)
	}
	type fn struct {
		name, demangled string
		start           int
		count           uint64
	}
	var gotF, refF []fn
	for _, f := range got.Files[0].Functions {
		gotF = append(gotF, fn{f.Name, f.DemangledName, f.StartLine, f.ExecutionCount})
	}
	for _, f := range ref.Files[0].Functions {
		refF = append(refF, fn{f.Name, f.DemangledName, f.StartLine, f.ExecutionCount})
	}
	if !slices.Equal(gotF, refF) {
		t.Errorf("functions differ from gcov's:\n got %+v\nwant %+v", gotF, refF)
	}
	// end_line is estimated from the counted lines: it is the function's
	// last counted line, which lies before gcov's end (the closing brace).
	for i, f := range got.Files[0].Functions {
		r := ref.Files[0].Functions[i]
		if f.EndLine < f.StartLine || f.EndLine > r.EndLine {
			t.Errorf("%s: end_line %d, want within [%d, %d] (gcov's end)", f.Name, f.EndLine, f.StartLine, r.EndLine)
		}
	}
	if strings.Contains(gotText, `"branches": null`) {
		t.Error("branches is null, gcov writes []")
	}
}
