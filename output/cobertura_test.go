package output

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/patchprof/patchprof/profile"
)

func TestWriteCoberturaGolden(t *testing.T) {
	funcsOnly := exportProfile(dir)
	funcsOnly.Mode, funcsOnly.Lines = profile.ModeFuncs, []profile.Line{}
	outside := exportProfile(dir)
	outside.Lines = append(outside.Lines, profile.Line{File: "/usr/include/x86_64-linux-gnu/bits/stdio2.h", Line: 112, Count: 3})
	sub := exportProfile(dir)
	sub.Lines = append(sub.Lines, profile.Line{File: dir + "/lib/util/c.c", Line: 4, Count: 0})
	for _, tc := range []struct {
		golden string
		p      *profile.Profile
		root   string
	}{
		{"cobertura/lines_funcs.xml", exportProfile(dir), dir},
		{"cobertura/funcs.xml", funcsOnly, dir},
		{"cobertura/outside_root.xml", outside, dir},
		{"cobertura/subdirs.xml", sub, dir},
		{"cobertura/no_root.xml", exportProfile(dir), ""},
		{"cobertura/modules.xml", twoModules(), dir},
		{"cobertura/empty.xml", &profile.Profile{Mode: profile.ModeLinesFuncs}, dir},
		{"cobertura/blocks.xml", blocksProfile(), "/src"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteCobertura(&b, tc.p, CoberturaOptions{Root: tc.root, Timestamp: 1700000000}); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.golden, b.String())
			rev := *tc.p
			rev.Lines, rev.Functions = slices.Clone(tc.p.Lines), slices.Clone(tc.p.Functions)
			slices.Reverse(rev.Lines)
			slices.Reverse(rev.Functions)
			var b2 bytes.Buffer
			if err := WriteCobertura(&b2, &rev, CoberturaOptions{Root: tc.root, Timestamp: 1700000000}); err != nil {
				t.Fatal(err)
			}
			if d := unifiedDiff("in order", "reversed", b.String(), b2.String()); d != "" {
				t.Errorf("output depends on the order of the profile's slices:\n%s", d)
			}
		})
	}
}

// TestWriteCoberturaDTD validates the golden reports with xmllint (Debian
// libxml2-utils, installed by .ci/run) against the DTD their DOCTYPE names,
// which an XML catalog resolves to testdata/cobertura/coverage-04.dtd, so
// nothing is fetched from the network.
func TestWriteCoberturaDTD(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint (Debian libxml2-utils) not in PATH: cannot validate against the DTD")
	}
	dtd, err := filepath.Abs(filepath.Join("testdata", "cobertura", "coverage-04.dtd"))
	if err != nil {
		t.Fatal(err)
	}
	catalog := filepath.Join(t.TempDir(), "catalog.xml")
	err = os.WriteFile(catalog, []byte(`<?xml version="1.0"?>
<catalog xmlns="urn:oasis:names:tc:entity:xmlns:xml:catalog">
  <system systemId="http://cobertura.sourceforge.net/xml/coverage-04.dtd" uri="file://`+dtd+`"/>
</catalog>
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	reports, err := filepath.Glob(filepath.Join("testdata", "cobertura", "*.xml"))
	if err != nil || len(reports) != 8 {
		t.Fatalf("golden reports: %v %v, want 8", reports, err)
	}
	for _, r := range reports {
		cmd := exec.Command(xmllint, "--noout", "--nonet", "--valid", r)
		cmd.Env = append(os.Environ(), "XML_CATALOG_FILES="+catalog)
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("%v: %v\n%s", cmd, err, out)
		}
	}
	// The validation does fail on a report the DTD does not allow.
	bad := filepath.Join(t.TempDir(), "bad.xml")
	doc, err := os.ReadFile(reports[0])
	if err != nil {
		t.Fatal(err)
	}
	doc = bytes.Replace(doc, []byte(` line-rate=`), []byte(` rate=`), 1)
	if err := os.WriteFile(bad, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(xmllint, "--noout", "--nonet", "--valid", bad)
	cmd.Env = append(os.Environ(), "XML_CATALOG_FILES="+catalog)
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("%v accepts a coverage element without line-rate:\n%s", cmd, out)
	}
}

// cobDoc is what the comparison with gcovr reads of a Cobertura report.
type cobDoc struct {
	LineRate     string   `xml:"line-rate,attr"`
	LinesCovered int      `xml:"lines-covered,attr"`
	LinesValid   int      `xml:"lines-valid,attr"`
	Sources      []string `xml:"sources>source"`
	Packages     []struct {
		Name     string `xml:"name,attr"`
		LineRate string `xml:"line-rate,attr"`
		Classes  []struct {
			Filename string `xml:"filename,attr"`
			LineRate string `xml:"line-rate,attr"`
			Lines    []struct {
				Number int    `xml:"number,attr"`
				Hits   uint64 `xml:"hits,attr"`
			} `xml:"lines>line"`
		} `xml:"classes>class"`
	} `xml:"packages>package"`
}

// TestWriteCoberturaMatchesGcovr compares WriteCobertura with gcovr --xml,
// the Cobertura writer of the C world, over the same counts: it builds
// testdata/gcov/prog.c with gcc --coverage -O0, runs it, has gcovr write
// its Cobertura report, builds a profile of gcov's counts (read back from
// `gcov --json-format`), and requires WriteCobertura's report to agree with
// gcovr's element by element: every <line> number and hits, each class's
// filename and line-rate, each package's name and line-rate, and the
// totals lines-covered, lines-valid and line-rate. gcovr 5.2 writes no
// <method> elements and counts branches, which patchprof does not, so
// those are not compared.
func TestWriteCoberturaMatchesGcovr(t *testing.T) {
	work, run := coverageRun(t)
	prog := filepath.Join(work, "prog.c")
	gcovr, err := exec.LookPath("gcovr")
	if err != nil {
		t.Skip("gcovr not in PATH (Debian package gcovr): cannot compare with the Cobertura report gcovr writes")
	}
	ref := filepath.Join(work, "gcovr.xml")
	run(gcovr, "-r", work, "--xml-pretty", "-o", ref, work)
	run("gcov", "--json-format", "prog.c")

	gz, err := os.ReadFile(filepath.Join(work, "prog.gcov.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var counts gcovJSON
	if err := json.Unmarshal([]byte(gunzipJSON(t, gz)), &counts); err != nil {
		t.Fatal(err)
	}
	p := &profile.Profile{Executable: filepath.Join(work, "prog"), Mode: profile.ModeLinesFuncs}
	for _, l := range counts.Files[0].Lines {
		p.Lines = append(p.Lines, profile.Line{File: prog, Line: l.LineNumber, Count: l.Count})
	}
	for i, fn := range counts.Files[0].Functions {
		p.Functions = append(p.Functions, profile.Function{Name: fn.Name, Count: fn.ExecutionCount,
			File: prog, Line: fn.StartLine, Address: profile.Address(0x401000 + uint64(16*i))})
	}
	var b bytes.Buffer
	if err := WriteCobertura(&b, p, CoberturaOptions{Root: work, Timestamp: 1}); err != nil {
		t.Fatal(err)
	}

	refBytes, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	var want, got cobDoc
	if err := xml.Unmarshal(refBytes, &want); err != nil {
		t.Fatalf("gcovr's report: %v\n%s", err, refBytes)
	}
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("WriteCobertura's report: %v\n%s", err, b.Bytes())
	}
	if want.LinesValid < 10 || len(want.Packages) != 1 || len(want.Packages[0].Classes) != 1 {
		t.Fatalf("gcovr's report has %d lines in %d packages, want >= 10 in 1 package of 1 class:\n%s",
			want.LinesValid, len(want.Packages), refBytes)
	}
	if got.LineRate != want.LineRate || got.LinesCovered != want.LinesCovered || got.LinesValid != want.LinesValid {
		t.Errorf("totals: line-rate %s, lines-covered %d, lines-valid %d; gcovr: %s, %d, %d",
			got.LineRate, got.LinesCovered, got.LinesValid, want.LineRate, want.LinesCovered, want.LinesValid)
	}
	if len(got.Packages) != len(want.Packages) {
		t.Fatalf("%d packages, gcovr writes %d:\n%s", len(got.Packages), len(want.Packages), b.Bytes())
	}
	for i, wp := range want.Packages {
		gp := got.Packages[i]
		if gp.Name != wp.Name || gp.LineRate != wp.LineRate || len(gp.Classes) != len(wp.Classes) {
			t.Errorf("package %d: name %q line-rate %s with %d classes; gcovr: %q %s with %d",
				i, gp.Name, gp.LineRate, len(gp.Classes), wp.Name, wp.LineRate, len(wp.Classes))
			continue
		}
		for j, wc := range wp.Classes {
			gc := gp.Classes[j]
			if gc.Filename != wc.Filename || gc.LineRate != wc.LineRate {
				t.Errorf("class %d: filename %q line-rate %s; gcovr: %q %s", j, gc.Filename, gc.LineRate, wc.Filename, wc.LineRate)
			}
			if !slices.Equal(gc.Lines, wc.Lines) {
				t.Errorf("%s: lines\n got %v\nwant %v (gcovr)", wc.Filename, gc.Lines, wc.Lines)
			}
		}
	}
}
