//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	// Every run of the suite fills an analysis cache of its own, never
	// the user's (~/.cache/patchprof): the tests see one another's
	// entries, as two runs of a program do. Go's build cache stays
	// where it was (it is under XDG_CACHE_HOME too): the go builds of
	// patchprof and of the Go targets would otherwise start cold.
	if err := keepGoCache(); err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	if err := os.Setenv("XDG_CACHE_HOME", filepath.Join(workDir, "cache")); err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
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

// keepGoCache sets GOCACHE, when unset, to the build cache go uses now,
// so that a later change of XDG_CACHE_HOME does not move it.
func keepGoCache() error {
	if os.Getenv("GOCACHE") != "" {
		return nil
	}
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return fmt.Errorf("go env GOCACHE: %w", err)
	}
	return os.Setenv("GOCACHE", strings.TrimSpace(string(out)))
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
	if e := os.Getenv(engineEnv); e != "" && (len(args) == 0 || (args[0] != "report" && args[0] != "merge" && args[0] != "watch")) {
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

// detachSaved detaches patchprof pp, started by startAttached with
// --save save, with SIGINT (as an operator's Ctrl-C), reads the rest of
// its standard error (esc), waits for it to exit 0, and returns the saved
// profile and that output.
func detachSaved(t *testing.T, pp *exec.Cmd, esc *bufio.Scanner, save string) (*profile, string) {
	t.Helper()
	pp.Process.Signal(syscall.SIGINT)
	var rest strings.Builder
	for esc.Scan() {
		rest.WriteString(esc.Text() + "\n")
	}
	if err := pp.Wait(); err != nil {
		t.Fatalf("patchprof: %v, want exit 0\n%s", err, rest.String())
	}
	p, err := readProfile(save)
	if err != nil {
		t.Fatal(err)
	}
	return p, rest.String()
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
