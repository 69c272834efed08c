package main

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A Suite is a real project's own test suite: a Debian source package,
// pinned to the version integration/projects_test.go pins (its
// testdata/projects/*.txt headers), built by a shell script and run by
// another, each script a whole suite of several processes. patchprof
// follows the script's children, so the suite runs under it as under
// `make test`.
type Suite struct {
	// Pkg and Version name the source package for apt-get source.
	Pkg, Version string
	// Build runs in a copy of the unpacked source with CC, CXX and CFLAGS
	// set (-g, the optimisation level and, for the gcov build,
	// --coverage) and builds the programs the suite runs.
	Build string
	// Test runs in an empty directory with S set to the built tree; its
	// standard output must not vary from run to run (times filtered out).
	Test string
	// Varies, when set, says why the suite's counts differ from run to
	// run: the bench then does not compare its profiles.
	Varies string
}

// suiteOpts are the optimisation levels each suite is built at; the
// first makes the workload named after the suite, the others add
// "-" and the level to the name.
var suiteOpts = []string{"-O0", "-O2"}

// suites are the projects whose test suites the bench runs, in table
// order: three from integration/projects_test.go (the same pinned
// versions and the same steps) and an interpreter's.
var suites = []struct {
	name, title string
	mode        []string
	s           Suite
}{
	// minigzip takes -r (RLE) and -f (fixed codes), where the
	// integration test passes -R and -F, which it reads as file names
	// and fails on (that test lets a step fail).
	{"zlib", "zlib's tests (example, infcover, minigzip at six levels and strategies)", []string{"--lines", "--funcs"}, Suite{
		Pkg: "zlib", Version: "1:1.2.13.dfsg-1",
		Build: `set -e
D="-D_LARGEFILE64_SOURCE=1 -DHAVE_HIDDEN -DHAVE_UNISTD_H -I."
L="adler32 compress crc32 deflate gzclose gzlib gzread gzwrite infback inffast inflate inftrees trees uncompr zutil"
for f in $L; do $CC $CFLAGS $D -c $f.c; done
for p in example minigzip infcover; do $CC $CFLAGS $D -o $p test/$p.c $(for f in $L; do printf '%s.o ' $f; done); done`,
		Test: `set -e
cat $S/trees.c $S/zutil.c > in
$S/example foo.gz
$S/infcover
for l in -9 -1 -h -r -f -6; do $S/minigzip $l in; $S/minigzip -d in.gz; done`,
	}},
	{"bzip2", "bzip2's make test (three samples compressed at -1 to -3, decompressed, compared)", []string{"--lines", "--funcs"}, Suite{
		Pkg: "bzip2", Version: "1.0.8-5",
		Build: `set -e
for f in blocksort huffman crctable randtable compress decompress bzlib bzip2; do $CC $CFLAGS -D_FILE_OFFSET_BITS=64 -c $f.c; done
$CC $CFLAGS -o bzip2 blocksort.o huffman.o crctable.o randtable.o compress.o decompress.o bzlib.o bzip2.o`,
		Test: `set -e
for i in 1 2 3; do $S/bzip2 -$i < $S/sample$i.ref > sample$i.rb2; done
$S/bzip2 -d < $S/sample1.bz2 > sample1.tst
$S/bzip2 -d < $S/sample2.bz2 > sample2.tst
$S/bzip2 -ds < $S/sample3.bz2 > sample3.tst
for i in 1 2 3; do cmp $S/sample$i.bz2 sample$i.rb2; cmp $S/sample$i.ref sample$i.tst; done`,
	}},
	{"cjson", "cJSON's unit tests (21 Unity programs)", []string{"--lines", "--funcs"}, Suite{
		Pkg: "cjson", Version: "1.7.15-1+deb12u4",
		Build: `set -e
I="-I. -Itests/unity/src"
$CC $CFLAGS $I -c tests/unity/src/unity.c
for n in parse_examples parse_number parse_hex4 parse_string parse_array parse_object parse_value print_string print_number print_array print_object print_value misc_tests parse_with_opts compare_tests cjson_add readme_examples minify_tests; do
	$CC $CFLAGS $I -o $n tests/$n.c unity.o -lm
done
for n in json_patch_tests old_utils_tests misc_utils_tests; do $CC $CFLAGS $I -o $n tests/$n.c cJSON_Utils.c unity.o -lm; done`,
		Test: `set -e
cp -r $S/tests/inputs $S/tests/json-patch-tests .
for n in parse_examples parse_number parse_hex4 parse_string parse_array parse_object parse_value print_string print_number print_array print_object print_value misc_tests parse_with_opts compare_tests cjson_add readme_examples minify_tests json_patch_tests old_utils_tests misc_utils_tests; do $S/$n; done`,
	}},
	{"tinyxml2", "TinyXML-2's xmltest (C++)", []string{"--lines", "--funcs"}, Suite{
		Pkg: "tinyxml2", Version: "9.0.0+dfsg-3.1",
		Build: `$CXX $CFLAGS -o xmltest xmltest.cpp tinyxml2.cpp`,
		// xmltest times its parse of dream.xml.
		Test: `set -e
cp -r $S/resources .
$S/xmltest > out
grep -v 'milli-seconds$' out`,
	}},
	{"jimtcl", "Jim Tcl's tests (an interpreter; the tests that wait on timers, signals, sockets or child processes left out)", []string{"--lines", "--funcs"}, Suite{
		Pkg: "jimtcl", Version: "0.81+dfsg0-2",
		Build: `set -e
./configure CC="$CC" CFLAGS="$CFLAGS" LDFLAGS="$CFLAGS" > configure.log
make > make.log`,
		// The tests left out spend their time asleep (after, alarm,
		// sockets, exec of children that sleep): no measure of an
		// interpreter. Each test file sources ../tcltest.tcl.
		Test: `set -e
cp $S/tcltest.tcl .
cp -r $S/tests t
cd t
for f in *.test; do
	case $f in timer.test|event.test|signal.test|lock.test|exec.test|exec2.test|interactive.test|socket.test) continue;; esac
	$S/jimsh $f
done`,
		Varies: "draw random numbers (rand, tempfiles, JimRandomBytes) and regexps over them",
	}},
}

// suiteWorkloads makes a workload of each suite at each level of
// suiteOpts.
func suiteWorkloads() []Workload {
	var ws []Workload
	for _, s := range suites {
		for i, opt := range suiteOpts {
			name := s.name
			if i > 0 {
				name += opt
			}
			suite := s.s
			ws = append(ws, Workload{
				Name:  name,
				Title: s.title + ", " + opt + ", `" + strings.Join(s.mode, " ") + "`",
				Suite: &suite, Opt: opt, Mode: s.mode,
			})
		}
	}
	return ws
}

// trapsNote finds the number of traps in a profile's notes: the jump
// engine's "(N traps in all)"; ok is false when no note says.
var trapsNote = regexp.MustCompile(`\((\d+) traps in all\)`)

// trapsOf returns the traps a profile's notes report.
func trapsOf(notes []string) (traps uint64, ok bool) {
	for _, n := range notes {
		if m := trapsNote.FindStringSubmatch(n); m != nil {
			v, err := strconv.ParseUint(m[1], 10, 64)
			return v, err == nil
		}
	}
	return 0, false
}

// A TrapReason is why sites keep a breakpoint, with how many sites and
// how many traps they took, from a profile's notes.
type TrapReason struct {
	Reason       string
	Sites, Traps uint64
}

// keptNote marks the note that lists the sites keeping a breakpoint.
const keptNote = "sites that keep a breakpoint, by reason: "

// keptEntry is one reason of that note: "SITES (TRAPS traps): REASON" or
// "SITES: REASON".
var keptEntry = regexp.MustCompile(`^(\d+)(?: \((\d+) traps\))?: (.*)$`)

// trapReasons reads the reasons sites kept a breakpoint from a profile's
// notes, those that trapped most first.
func trapReasons(notes []string) []TrapReason {
	var rs []TrapReason
	for _, n := range notes {
		_, list, ok := strings.Cut(n, keptNote)
		if !ok {
			continue
		}
		for _, e := range strings.Split(list, "; ") {
			m := keptEntry.FindStringSubmatch(e)
			if m == nil {
				continue
			}
			r := TrapReason{Reason: m[3]}
			r.Sites, _ = strconv.ParseUint(m[1], 10, 64)
			r.Traps, _ = strconv.ParseUint(m[2], 10, 64)
			rs = append(rs, r)
		}
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Traps > rs[j].Traps })
	return rs
}

// suiteNote is a suite's traps against its hits, and the reasons of the
// sites that trapped most, for the report.
func suiteNote(name string, hits, traps uint64, reasons []TrapReason) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s traps of %s hits (%s)\n", name, thousands(int64(traps)), thousands(int64(hits)), formatShare(traps, hits))
	kept := uint64(0)
	for i, r := range reasons {
		kept += r.Traps
		if i < 8 && r.Traps > 0 {
			fmt.Fprintf(&b, "  %s traps at %d sites: %s\n", thousands(int64(r.Traps)), r.Sites, r.Reason)
		}
	}
	if traps > kept {
		// The jump engine patches a function at its entry's first hit,
		// a trap, in each process.
		fmt.Fprintf(&b, "  %s traps at the functions' first hits, each process apart\n", thousands(int64(traps-kept)))
	}
	return b.String()
}

// formatShare prints part as a percentage of whole, "-" when whole is 0.
func formatShare(part, whole uint64) string {
	if whole == 0 {
		return "-"
	}
	return fmt.Sprintf("%.4f%%", 100*float64(part)/float64(whole))
}

// A SuiteRow is one suite's line of the summary table: wall times as
// ratios to native, and the traps among the hits of patchprof's run.
type SuiteRow struct {
	Suite, Opt, Native, Gcov, Jump, Traps, Hits, Share string
}

// suiteRow summarises a suite's measures (as rows takes them) with its
// hits and traps.
func suiteRow(w Workload, ms []Measure, hits, traps uint64, timeout time.Duration) SuiteRow {
	r := SuiteRow{Suite: w.Suite.Pkg, Opt: w.Opt, Native: "-", Gcov: "-", Jump: "-",
		Traps: thousands(int64(traps)), Hits: thousands(int64(hits)), Share: formatShare(traps, hits)}
	if hits == 0 {
		r.Traps, r.Hits = "-", "-"
	}
	for _, row := range rows(w.Name, ms, hits, timeout) {
		for _, m := range ms {
			if m.Label != row.Config {
				continue
			}
			switch m.Config {
			case cfgNative:
				r.Native = row.Median
			case cfgGcov:
				r.Gcov = row.Ratio
			case cfgJump:
				r.Jump = row.Ratio
			}
		}
	}
	return r
}

// writeSuiteTable prints the suites' summary as a Markdown table.
func writeSuiteTable(w io.Writer, rs []SuiteRow) error {
	var b strings.Builder
	b.WriteString("| suite | build | native | gcov | patchprof | traps | hits | traps/hits |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Suite, r.Opt, r.Native, r.Gcov, r.Jump, r.Traps, r.Hits, r.Share)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
