//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// runTimeout bounds one run of patchprof; a run that takes longer is killed
// and fails its test. It only catches a hang: the heaviest run of the suite
// (TestJumpLifecycle's under xol, 40 s on an idle 2-core machine) took over
// two minutes with the machine's load at 15.
const runTimeout = 10 * time.Minute

var (
	// patchprofBin is the CLI built by TestMain; buildErr is set instead
	// when it did not build.
	patchprofBin string
	buildErr     error

	// workDir is the process-wide scratch directory: the patchprof binary
	// and the cached target builds live there. TestMain removes it.
	workDir string

	// testdataDir is the absolute path of integration/testdata.
	testdataDir string
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	var err error
	workDir, err = os.MkdirTemp("", "patchprof-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	defer os.RemoveAll(workDir)
	testdataDir, err = filepath.Abs("testdata")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	patchprofBin, buildErr = buildPatchprof(workDir)
	if buildErr != nil {
		// Loud, once; every test that needs the CLI fails with it too.
		fmt.Fprintf(os.Stderr, "integration: building patchprof failed:\n%v\n", buildErr)
	}
	return m.Run()
}

// buildPatchprof builds ./cmd/patchprof from the module root into dir.
func buildPatchprof(dir string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "patchprof")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/patchprof")
	cmd.Dir = root
	// As README.md builds it: static.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("CGO_ENABLED=0 go build -o %s ./cmd/patchprof (in %s): %w\n%s", bin, root, err, out)
	}
	return bin, nil
}

// moduleRoot is the directory holding patchprof's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err == nil {
		if gomod := strings.TrimSpace(string(out)); gomod != "" && gomod != os.DevNull {
			return filepath.Dir(gomod), nil
		}
	}
	return filepath.Abs("..")
}

// mustHaveCC skips the test when gcc is not installed.
func mustHaveCC(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skipf("gcc not found in PATH (%v): the integration tests compile their targets with it", err)
	}
}

// mustHaveGcov skips the test when gcov is not installed.
func mustHaveGcov(t testing.TB) {
	t.Helper()
	mustHaveCC(t)
	if _, err := exec.LookPath("gcov"); err != nil {
		t.Skipf("gcov not found in PATH (%v): it is the oracle for line counts", err)
	}
}

var ptraceCheck struct {
	once sync.Once
	err  error
}

// mustHavePtrace skips the test when this process may not trace a child
// (seccomp or a Yama policy refusing PTRACE_TRACEME): patchprof could not
// work here at all. Any other failure of the probe fails the test.
func mustHavePtrace(t testing.TB) {
	t.Helper()
	ptraceCheck.once.Do(func() {
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
		if err := cmd.Start(); err != nil {
			ptraceCheck.err = err
			return
		}
		// The child is stopped at its exec, traced by us: kill it and reap
		// it (wait4 reports the stop first).
		pid := cmd.Process.Pid
		_ = syscall.Kill(pid, syscall.SIGKILL)
		for {
			var ws syscall.WaitStatus
			if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil || ws.Exited() || ws.Signaled() {
				break
			}
		}
	})
	if err := ptraceCheck.err; err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
			t.Skipf("ptrace is not permitted here (PTRACE_TRACEME: %v)", err)
		}
		t.Fatalf("starting a traced child: %v", err)
	}
}

// mustHaveCLI fails the test when patchprof did not build.
func mustHaveCLI(t testing.TB) {
	t.Helper()
	if buildErr != nil {
		t.Fatalf("patchprof did not build:\n%v", buildErr)
	}
}

// needs is the usual preamble of a test that runs C targets under patchprof.
func needs(t testing.TB) {
	t.Helper()
	mustHaveCC(t)
	mustHavePtrace(t)
	mustHaveCLI(t)
}

// Target builds, cached per (source, flags) for the life of the process.

type buildResult struct {
	path string
	err  error
}

var builds struct {
	sync.Mutex
	m map[string]buildResult
}

// buildC compiles testdata/src with gcc and the given flags (for example
// "-g", "-O0", "-no-pie") and returns the executable's path. The source is
// named by its absolute path, so DWARF holds absolute file names.
func buildC(t testing.TB, src string, flags ...string) string {
	t.Helper()
	mustHaveCC(t)
	return buildCFrom(t, filepath.Join(testdataDir, src), flags...)
}

// buildCFrom is buildC for a source anywhere (an absolute path).
func buildCFrom(t testing.TB, srcPath string, flags ...string) string {
	t.Helper()
	return buildSources(t, []string{srcPath}, flags...)
}

// compilerFor is the compiler driver for a source file: g++ for C++ (by
// its extension), else gcc. Linking C++ with gcc would leave out libstdc++.
func compilerFor(src string) string {
	switch filepath.Ext(src) {
	case ".cpp", ".cc", ".cxx", ".C":
		return "g++"
	}
	return "gcc"
}

// mustHaveCompiler skips the test when the compiler for src is not
// installed.
func mustHaveCompiler(t testing.TB, src string) {
	t.Helper()
	cc := compilerFor(src)
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("%s not found in PATH (%v): %s is compiled with it", cc, err, filepath.Base(src))
	}
}

// buildSources compiles and links the sources (absolute paths) into one
// executable with the compiler of the first (compilerFor) and returns its
// path. The executable is named after the first source.
func buildSources(t testing.TB, srcPaths []string, flags ...string) string {
	t.Helper()
	mustHaveCompiler(t, srcPaths[0])
	srcPath := srcPaths[0]
	cc := compilerFor(srcPath)
	key := strings.Join(srcPaths, "\x00") + "\x00\x00" + strings.Join(flags, "\x00")
	builds.Lock()
	defer builds.Unlock()
	if builds.m == nil {
		builds.m = make(map[string]buildResult)
	}
	r, ok := builds.m[key]
	if !ok {
		sum := sha256.Sum256([]byte(key))
		base := strings.TrimSuffix(filepath.Base(srcPath), filepath.Ext(srcPath))
		out := filepath.Join(workDir, "bin", base+"-"+hex.EncodeToString(sum[:6]))
		r = buildResult{path: out}
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			r.err = err
		} else {
			args := append(append(append([]string{}, flags...), "-o", out), srcPaths...)
			cmd := exec.Command(cc, args...)
			cmd.Dir = filepath.Dir(out)
			if msg, err := cmd.CombinedOutput(); err != nil {
				r.err = fmt.Errorf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, msg)
			}
		}
		builds.m[key] = r
	}
	if r.err != nil {
		t.Fatalf("building %s: %v", filepath.Base(srcPath), r.err)
	}
	return r.path
}

// buildGo builds the Go program in testdata/dir (a module of its own, named
// target, so it stays out of patchprof's module) with go build's flags (for
// example "-gcflags=all=-N -l" or "-cover") and returns its path.
func buildGo(t testing.TB, dir string, flags ...string) string {
	t.Helper()
	key := "go\x00" + dir + "\x00" + strings.Join(flags, "\x00")
	builds.Lock()
	defer builds.Unlock()
	if builds.m == nil {
		builds.m = make(map[string]buildResult)
	}
	r, ok := builds.m[key]
	if !ok {
		name := "go-" + filepath.Base(dir)
		if len(flags) > 0 {
			sum := sha256.Sum256([]byte(key))
			name += "-" + hex.EncodeToString(sum[:6])
		}
		out := filepath.Join(workDir, "bin", name)
		r = buildResult{path: out}
		args := append(append([]string{"build"}, flags...), "-o", out, ".")
		cmd := exec.Command("go", args...)
		cmd.Dir = filepath.Join(testdataDir, dir)
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
		if msg, err := cmd.CombinedOutput(); err != nil {
			r.err = fmt.Errorf("go %s (in %s): %v\n%s", shellQuote(args), cmd.Dir, err, msg)
		}
		builds.m[key] = r
	}
	if r.err != nil {
		t.Fatalf("building %s: %v", dir, r.err)
	}
	return r.path
}

// Running patchprof.

// runOpts describes one run of patchprof.
type runOpts struct {
	args    []string      // patchprof's arguments: flags, program, its arguments
	stdin   string        // the target's standard input
	env     []string      // added to the test's environment
	dir     string        // working directory ("" = the test's)
	timeout time.Duration // 0 = runTimeout
	// started, if set, is called with patchprof's pid once it is running,
	// and a function returning the target's stdout so far.
	started func(pid int, stdout func() string)
}

// result is what one run of patchprof produced.
type result struct {
	stdout, stderr string
	code           int // exit code; -1 when patchprof itself died of a signal
	// cpu is the user and system time of patchprof and of the children it
	// reaped (the target), as wait4 reports it.
	cpu     time.Duration
	cmdline string
}

func (r result) String() string {
	return fmt.Sprintf("%s\nexit code %d\nstdout:\n%s\nstderr:\n%s", r.cmdline, r.code, r.stdout, r.stderr)
}

// run runs patchprof and returns its output and exit code. A run longer than
// the timeout is killed (with its whole process group) and fails the test.
// A Go panic or goroutine dump on stderr fails the test: patchprof must
// return errors, never panic.
func run(t testing.TB, o runOpts) result {
	t.Helper()
	mustHaveCLI(t)
	timeout := o.timeout
	if timeout == 0 {
		timeout = runTimeout
	}
	var stdout, stderr lockedBuffer
	args := o.args
	if e := os.Getenv(engineEnv); e != "" && (len(args) == 0 || (args[0] != "report" && args[0] != "merge")) {
		args = append([]string{"--engine=" + e}, args...)
	}
	cmd := exec.Command(patchprofBin, args...)
	cmd.Stdin = strings.NewReader(o.stdin)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.Dir = o.dir
	cmd.Env = append(os.Environ(), o.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	res := result{cmdline: "patchprof " + shellQuote(o.args)}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", res.cmdline, err)
	}
	if o.started != nil {
		o.started(cmd.Process.Pid, stdout.String)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(timeout):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("%s: still running after %v; killed\nstdout:\n%s\nstderr:\n%s",
			res.cmdline, timeout, tail(stdout.String()), tail(stderr.String()))
	}
	res.stdout, res.stderr = stdout.String(), stderr.String()
	res.code = cmd.ProcessState.ExitCode()
	res.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s: %v", res.cmdline, err)
	}
	if res.code == -1 {
		t.Errorf("%s: patchprof itself was killed: %v\nstderr:\n%s", res.cmdline, cmd.ProcessState, tail(res.stderr))
	}
	if isGoCrash(res.stderr) {
		t.Errorf("%s: patchprof panicked or dumped goroutines:\n%s", res.cmdline, tail(res.stderr))
	}
	return res
}

// lockedBuffer is a bytes.Buffer safe to read while a command writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var goCrashRE = regexp.MustCompile(`(?m)^(panic: |fatal error: |goroutine \d+ \[)`)

func isGoCrash(s string) bool { return goCrashRE.MatchString(s) }

// runProfile runs patchprof with --save and returns the run and the decoded
// profile. args are the arguments after "--save FILE".
func runProfile(t testing.TB, o runOpts) (result, *profile) {
	t.Helper()
	save := filepath.Join(t.TempDir(), "p.json")
	o.args = append([]string{"--save", save}, o.args...)
	res := run(t, o)
	p, err := readProfile(save)
	if err != nil {
		t.Fatalf("%s: reading the saved profile: %v\n%s", res.cmdline, err, res)
	}
	return res, p
}

func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$*?[]^()|&;<>") {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			q[i] = a
		}
	}
	return strings.Join(q, " ")
}

// tail is the end of a long output, enough to diagnose without flooding.
func tail(s string) string {
	const max = 4000
	if len(s) <= max {
		return s
	}
	return "...\n" + s[len(s)-max:]
}

// The saved profile (docs/profile-format.md), decoded with our own structs
// so the tests hold patchprof to the documented format, not to its code.
// Unknown fields are ignored.

type profile struct {
	Version    int               `json:"version"`
	Executable string            `json:"executable"`
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

// The gcov oracle.

// gcovRun says how to run the coverage build of a target.
type gcovRun struct {
	src    string   // the source gcov reports on: a file in testdata (such as "shapes/loops.c"), or an absolute path; .cpp is C++
	others []string // more sources linked in, named as src (their counts are not read)
	flags  []string // extra gcc flags (e.g. -pthread, -I DIR)
	args   []string // the target's arguments
	stdin  string
}

// path is the absolute path of a source named as gcovRun.src is.
func (g gcovRun) path(src string) string {
	if filepath.IsAbs(src) {
		return src
	}
	return filepath.Join(testdataDir, src)
}

// gcovCounts builds a --coverage -O0 -g copy of g.src in a temporary
// directory (with g++ for C++), runs it, and returns gcov's count for every
// line of g.src with code (0 for "#####").
func gcovCounts(t testing.TB, g gcovRun) map[int]int64 {
	t.Helper()
	dir, base := coverageBuildRun(t, g)
	cmd := exec.Command("gcov", "-t", base)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gcov -t %s: %v\n%s", base, err, stderr.String())
	}
	counts, err := parseGcov(string(out), base)
	if err != nil {
		t.Fatalf("parsing gcov output: %v\n%s", err, tail(string(out)))
	}
	if len(counts) == 0 {
		t.Fatalf("gcov reported no executable lines for %s:\n%s", g.src, tail(string(out)))
	}
	return counts
}

// gcovJSON is gcovCounts through gcov's JSON intermediate format (GCC 9+
// --json-format), which also has each function's execution count and is
// quicker to read for a large source. It returns g.src's entry.
func gcovJSON(t testing.TB, g gcovRun) *gcovJSONFile {
	t.Helper()
	dir, base := coverageBuildRun(t, g)
	cmd := exec.Command("gcov", "--json-format", base)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcov --json-format %s: %v\n%s", base, err, tail(string(out)))
	}
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	f := readGcovJSON(t, filepath.Join(dir, stem+".gcov.json.gz")).file(t, base)
	if len(f.Lines) == 0 {
		t.Fatalf("gcov reported no executable lines for %s", g.src)
	}
	return f
}

// coverageBuildRun copies g.src and g.others into a temporary directory,
// builds them there with --coverage -O0 -g, runs the program, and returns
// the directory (holding the .gcno and .gcda files) and g.src's base name,
// what gcov is given.
func coverageBuildRun(t testing.TB, g gcovRun) (dir, base string) {
	t.Helper()
	mustHaveGcov(t)
	mustHaveCompiler(t, g.src)
	cc := compilerFor(g.src)
	dir = t.TempDir()
	var objs []string
	for _, src := range append([]string{g.src}, g.others...) {
		b, err := os.ReadFile(g.path(src))
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(src)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		// Compile and link separately so the notes file is stem.gcno.
		// Atomic counter updates keep gcov exact for threaded targets.
		obj := strings.TrimSuffix(name, filepath.Ext(name)) + ".o"
		args := append([]string{"-c", "--coverage", "-fprofile-update=atomic", "-O0", "-g"}, g.flags...)
		gccIn(t, dir, cc, append(args, "-o", obj, name)...)
		objs = append(objs, obj)
	}
	base = filepath.Base(g.src)
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	ldArgs := append([]string{"--coverage"}, g.flags...)
	gccIn(t, dir, cc, append(append(ldArgs, "-o", stem), objs...)...)
	cmd := exec.Command(filepath.Join(dir, stem), g.args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(g.stdin)
	var ee *exec.ExitError
	if out, err := cmd.CombinedOutput(); err != nil && !errors.As(err, &ee) {
		t.Fatalf("running the coverage build of %s: %v\n%s", g.src, err, tail(string(out)))
	}
	return dir, base
}

// gccIn runs the compiler cc (gcc, or g++ for C++) with args in dir,
// failing the test with its output.
func gccIn(t testing.TB, dir, cc string, args ...string) {
	t.Helper()
	cmd := exec.Command(cc, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, tail(string(out)))
	}
}

// parseGcov parses gcov's annotated source ("  count:  line:text") of the
// source file whose base name is file: a count, "#####" or "=====" (never
// run), "-" (no code); a "*" after a count marks a line with blocks not
// run. gcov -t prints every source file of the program, each opening with
// "-: 0:Source:NAME" (for C++, the library headers whose inline code was
// compiled in): lines of other files are ignored. For a function with
// several instances (a C++ template, an inline function emitted twice) gcov
// prints the summed count, then each instance's lines again between
// "------------------" rules under a "NAME:" header: those repeats are
// ignored too, as are function and branch summaries.
func parseGcov(text, file string) (map[int]int64, error) {
	counts := make(map[int]int64)
	inFile, inInstances, afterRule := false, false, false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		text := sc.Text()
		if strings.HasPrefix(text, "------------------") {
			afterRule = true
			continue
		}
		m := gcovLineRE.FindStringSubmatch(text)
		if afterRule {
			// The line after a rule is an instance's header (no count
			// field) or, after the last instance, the file's next line.
			inInstances = m == nil
			afterRule = false
		}
		if m == nil || inInstances {
			continue
		}
		line, err := strconv.Atoi(m[2])
		if err != nil {
			return nil, fmt.Errorf("bad line number in %q", text)
		}
		if line == 0 {
			if src, ok := strings.CutPrefix(m[3], "Source:"); ok {
				inFile = filepath.Base(src) == file
			}
			continue
		}
		if !inFile {
			continue
		}
		switch c := strings.TrimSuffix(m[1], "*"); c {
		case "-":
		case "#####", "=====":
			counts[line] = 0
		default:
			n, err := strconv.ParseInt(c, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: bad count %q", file, line, c)
			}
			counts[line] = n
		}
	}
	return counts, sc.Err()
}

// gcovLineRE matches a line of gcov's annotated source: count, line number
// and text.
var gcovLineRE = regexp.MustCompile(`^\s*([-#=\d*]+):\s*(\d+):(.*)$`)

// compareGcov runs src built with buildFlags under `patchprof --lines` and
// requires its line counts to equal gcov's on every line both report, and
// the lines both report to cover at least 90% of gcov's lines with code.
// It returns patchprof's profile.
func compareGcov(t *testing.T, g gcovRun, buildFlags []string) *profile {
	t.Helper()
	needs(t)
	mustHaveGcov(t)
	exe := buildC(t, g.src, buildFlags...)
	args := append([]string{"--lines", exe}, g.args...)
	res, p := runProfile(t, runOpts{args: args, stdin: g.stdin})
	want := gcovCounts(t, g)
	if res.code != 0 {
		t.Errorf("%s: exit code %d, want 0\n%s", res.cmdline, res.code, tail(res.stderr))
	}
	base := filepath.Base(g.src)
	got := linesOf(p, base)
	src := sourceLines(t, filepath.Join(testdataDir, g.src))
	text := func(line int) string {
		if line >= 1 && line <= len(src) {
			return strings.TrimSpace(src[line-1])
		}
		return "?"
	}
	for from, to := range moveFunctionEntries(want, got, src) {
		t.Logf("gcov's count of %s:%d %q (a function's entry) is compared with line %d %q", base, from, text(from), to, text(to))
	}
	var both, gcovOnly, ppOnly []int
	for line := range want {
		if _, ok := got[line]; ok {
			both = append(both, line)
		} else {
			gcovOnly = append(gcovOnly, line)
		}
	}
	for line := range got {
		if _, ok := want[line]; !ok {
			ppOnly = append(ppOnly, line)
		}
	}
	sort.Ints(both)
	sort.Ints(gcovOnly)
	sort.Ints(ppOnly)
	var bad []string
	for _, line := range both {
		if got[line] != want[line] {
			bad = append(bad, fmt.Sprintf("  %s:%d %-50q gcov %d, patchprof %d", base, line, text(line), want[line], got[line]))
		}
	}
	if len(bad) > 0 {
		t.Errorf("%s: %d of %d lines differ from gcov:\n%s", res.cmdline, len(bad), len(both), strings.Join(bad, "\n"))
	}
	for _, line := range gcovOnly {
		t.Logf("only gcov has %s:%d %q (count %d)", base, line, text(line), want[line])
	}
	for _, line := range ppOnly {
		t.Logf("only patchprof has %s:%d %q (count %d)", base, line, text(line), got[line])
	}
	if 10*len(both) < 9*len(want) {
		t.Errorf("%s: patchprof reports only %d of gcov's %d lines with code in %s (want at least 90%%)",
			res.cmdline, len(both), len(want), base)
	}
	return p
}

// moveFunctionEntries reconciles where gcov and DWARF put a function's
// entry: gcov counts it on the line naming the function ("main(void)"),
// gcc's line table on the line of the opening brace below it ("{", or "){"
// closing a parameter list that runs over several lines). A gcov line
// patchprof lacks whose next line with code on either side is such a brace
// line only patchprof has moves there. want is changed in place; the moves are
// returned (from gcov's line to patchprof's).
func moveFunctionEntries(want, got map[int]int64, src []string) map[int]int {
	moves := make(map[int]int)
	for line, n := range want {
		if _, ok := got[line]; ok {
			continue
		}
		next := 0
		for m := line + 1; m <= len(src); m++ {
			_, inGot := got[m]
			_, inWant := want[m]
			if inGot || inWant {
				if inGot && !inWant {
					next = m
				}
				break
			}
		}
		if next == 0 || !isOpeningBrace(src[next-1]) {
			continue
		}
		moves[line] = next
		delete(want, line)
		want[next] = n
	}
	return moves
}

// isOpeningBrace reports whether a source line opens a function body below
// its declarator: "{", or "){" ending a parameter list of several lines.
func isOpeningBrace(line string) bool {
	line = strings.TrimSpace(line)
	return strings.HasPrefix(line, "{") || strings.HasPrefix(line, "){")
}

// Exit statuses of patchprof's own failures (README, "Exit status"), those
// of env(1): patchprof failed, the program cannot be run, not found.
const (
	exitFailure   = 125
	exitCannotRun = 126
	exitNotFound  = 127
)

// oneLineError checks a failure of patchprof itself: exit code 125 and
// exactly one line on stderr, starting "patchprof: ". It returns the line.
func oneLineError(t testing.TB, res result) string {
	t.Helper()
	return oneLineErrorStatus(t, res, exitFailure)
}

// oneLineErrorStatus is oneLineError for the exit status want.
func oneLineErrorStatus(t testing.TB, res result, want int) string {
	t.Helper()
	if res.code != want {
		t.Errorf("%s: exit code %d, want %d", res.cmdline, res.code, want)
	}
	msg := strings.TrimSuffix(res.stderr, "\n")
	if msg == "" || strings.Contains(msg, "\n") {
		t.Errorf("%s: stderr is not exactly one line:\n%s", res.cmdline, tail(res.stderr))
	}
	if !strings.HasPrefix(msg, "patchprof: ") {
		t.Errorf("%s: stderr does not start with \"patchprof: \":\n%s", res.cmdline, tail(res.stderr))
	}
	return msg
}

// childrenOf returns the pids whose parent is pid, from /proc.
func childrenOf(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var kids []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) >= 2 {
			if ppid, err := strconv.Atoi(f[1]); err == nil && ppid == pid {
				kids = append(kids, n)
			}
		}
	}
	return kids
}

// startAttached starts patchprof with args (an attach, -p; the engine of
// the test binary added, as run adds it) and waits for its line saying it
// attached. It returns the command, to signal and wait for, and a scanner
// over the rest of patchprof's stderr; the command is killed when the test
// ends.
func startAttached(t *testing.T, args ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	if e := os.Getenv(engineEnv); e != "" {
		args = append([]string{"--engine=" + e}, args...)
	}
	pp := exec.Command(patchprofBin, args...)
	perr, err := pp.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pp.Process.Kill() })
	esc := bufio.NewScanner(perr)
	if !esc.Scan() || !strings.HasPrefix(esc.Text(), "patchprof: attached to PID ") {
		t.Fatalf("patchprof did not report the attach: %q", esc.Text())
	}
	return pp, esc
}
