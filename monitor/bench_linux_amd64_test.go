//go:build linux && amd64

package monitor

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/sys/unix"
)

// The benchmarks measure, in one run on one machine, the floor of any ptrace
// monitor (a bare int3 stop and continue), each engine's cost per hit and
// their ratios to the floor, the whole-run slowdown of a call-heavy program,
// and planting 100,000 sites through /proc/PID/mem.
//
//	go test -run '^$' -bench . -benchtime 1x ./monitor/

const trapLoopC = `
int main(void) {
	for (;;)
		__asm__ volatile("int3");
}
`

const callsC = `
#include <stdlib.h>
static volatile long total;
__attribute__((noinline)) void work(int i) { total += i; }
int main(int argc, char **argv) {
	int n = atoi(argv[1]);
	for (int i = 0; i < n; i++)
		work(i);
	return 0;
}
`

// launchFor starts prog stopped at its exec and seized, as Run does, and
// returns its PID and a function that kills and reaps it.
//
// Preconditions: on the locked OS thread that will trace it.
func launchFor(tb testing.TB, prog string, argv ...string) (int, func()) {
	tb.Helper()
	pid, err := launch(&Options{Path: prog, Args: argv})
	if err != nil {
		tb.Fatal(err)
	}
	return pid, func() {
		unix.Kill(pid, unix.SIGKILL)
		// A killed tracee stops once more at its PTRACE_EVENT_EXIT
		// (traceOptions) before it dies: let it go on.
		var ws unix.WaitStatus
		for waitPid(pid, &ws, unix.WALL) == nil && ws.Stopped() {
			cont(pid, 0)
		}
	}
}

func buildC(tb testing.TB, src string) string {
	tb.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		tb.Skip("gcc not installed: cannot build benchmark targets")
	}
	dir := tb.TempDir()
	c := filepath.Join(dir, "t.c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		tb.Fatal(err)
	}
	out := filepath.Join(dir, "t")
	if b, err := exec.Command("gcc", "-g", "-O1", "-o", out, c).CombinedOutput(); err != nil {
		tb.Fatalf("gcc: %v\n%s", err, b)
	}
	return out
}

// floorPerStop measures n bare stop/continue round trips: the target executes
// int3 in a loop, the tracer waits and continues without touching anything.
//
// Preconditions: on a locked OS thread.
func floorPerStop(tb testing.TB, prog string, n int, pin bool) time.Duration {
	pid, kill := launchFor(tb, prog, prog)
	defer kill()
	if pin {
		restore, err := pinTogether(pid)
		if err != nil {
			tb.Fatal(err)
		}
		defer restore()
	}
	var ws unix.WaitStatus
	cont(pid, 0)
	// Let the launch-time notifications (SIGCONT) pass before timing.
	for k := 0; k < 4; k++ {
		waitPid(pid, &ws, unix.WALL)
		cont(pid, 0)
	}
	start := time.Now()
	for k := 0; k < n; k++ {
		if err := waitPid(pid, &ws, unix.WALL); err != nil {
			tb.Fatal(err)
		}
		if err := cont(pid, 0); err != nil {
			tb.Fatal(err)
		}
	}
	return time.Since(start) / time.Duration(n)
}

// perHit measures the cost per hit of an engine: a run of the calls target
// with n hits of its one planted function, less the native run.
func perHit(tb testing.TB, prog string, n int, engine string, pin bool) time.Duration {
	sym, err := symtab.Open(prog)
	if err != nil {
		tb.Fatal(err)
	}
	defer sym.Close()
	plan := breakpoint.NewPlan(sym, nil, breakpoint.PlanOptions{Funcs: true, FuncFilter: func(s string) bool { return s == "work" }})
	if plan.Table.Len() != 1 {
		tb.Fatalf("planned %d sites, want 1", plan.Table.Len())
	}
	arg := strconv.Itoa(n)
	start := time.Now()
	if err := exec.Command(prog, arg).Run(); err != nil {
		tb.Fatal(err)
	}
	native := time.Since(start)
	start = time.Now()
	res, err := Run(Options{Path: prog, Args: []string{prog, arg}, Table: plan.Table, Entry: sym.Entry, Engine: engine, Pin: pin})
	if err != nil {
		tb.Fatal(err)
	}
	traced := time.Since(start)
	if engine == EngineXOL && res.ClassicSites != 0 {
		tb.Fatalf("xol served %d sites classically", res.ClassicSites)
	}
	if res.Exit.Code != 0 || res.Counts[plan.Table].Hits[0] != uint64(n) {
		tb.Fatalf("exit %+v, hits %d, want 0 and %d", res.Exit, res.Counts[plan.Table].Hits[0], n)
	}
	return (traced - native) / time.Duration(n)
}

// BenchmarkEngines reports, measured in the same run: the floor (ns/stop),
// the classic engine's cost per hit, the out-of-line engine's, and their
// ratios to the floor. Sub-benchmarks: the tracer and target pinned to one
// CPU (the default, Options.Pin) or left to the scheduler.
func BenchmarkEngines(b *testing.B) {
	trap := buildC(b, trapLoopC)
	calls := buildC(b, callsC)
	const n = 20000
	for _, pin := range []bool{true, false} {
		name := map[bool]string{true: "pinned", false: "unpinned"}[pin]
		b.Run(name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var floor, classic, xol time.Duration
			for i := 0; i < b.N; i++ {
				floor += floorPerStop(b, trap, n, pin)
				classic += perHit(b, calls, n, EngineClassic, pin)
				xol += perHit(b, calls, n, EngineXOL, pin)
			}
			b.ReportMetric(float64(floor.Nanoseconds())/float64(b.N), "ns/stop")
			b.ReportMetric(float64(classic.Nanoseconds())/float64(b.N), "classic-ns/hit")
			b.ReportMetric(float64(xol.Nanoseconds())/float64(b.N), "xol-ns/hit")
			b.ReportMetric(float64(classic)/float64(floor), "classic/stop")
			b.ReportMetric(float64(xol)/float64(floor), "xol/stop")
		})
	}
}

const fibC = `
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(int argc, char **argv) {
	printf("%ld\n", fib(atoi(argv[1])));
	return 0;
}
`

// BenchmarkFibSlowdown reports the whole-run slowdown of counting every
// function of a call-heavy program (recursive fib(25): 242,785 calls) over
// its native run, for each engine, pinned and not.
func BenchmarkFibSlowdown(b *testing.B) {
	prog := buildC(b, fibC)
	sym, err := symtab.Open(prog)
	if err != nil {
		b.Fatal(err)
	}
	defer sym.Close()
	const arg, calls = "25", 242785
	for _, engine := range []string{EngineClassic, EngineXOL} {
		for _, pin := range []bool{true, false} {
			b.Run(engine+"/"+map[bool]string{true: "pinned", false: "unpinned"}[pin], func(b *testing.B) {
				var native, traced time.Duration
				for i := 0; i < b.N; i++ {
					s := time.Now()
					if err := exec.Command(prog, arg).Run(); err != nil {
						b.Fatal(err)
					}
					native += time.Since(s)
					plan := breakpoint.NewPlan(sym, nil, breakpoint.PlanOptions{Funcs: true})
					s = time.Now()
					res, err := Run(Options{Path: prog, Args: []string{prog, arg}, Table: plan.Table, Entry: sym.Entry, Engine: engine, Pin: pin, Stdout: devNull(b)})
					if err != nil {
						b.Fatal(err)
					}
					traced += time.Since(s)
					k, _ := plan.Table.Index(funcAddr(b, sym, "fib"))
					if got := res.Counts[plan.Table].Hits[k]; got != calls {
						b.Fatalf("fib counted %d, want %d", got, calls)
					}
				}
				b.ReportMetric(float64(traced)/float64(native), "x-native")
				b.ReportMetric(float64(traced.Milliseconds())/float64(b.N), "ms/run")
			})
		}
	}
}

func funcAddr(tb testing.TB, sym *symtab.File, name string) uint64 {
	for _, f := range sym.Funcs {
		if f.Name == name {
			return f.Addr
		}
	}
	tb.Fatalf("no function %s", name)
	return 0
}

func devNull(tb testing.TB) *os.File {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return f
}

// BenchmarkPlant100k plants and removes 100,000 int3s in a live, stopped
// process (this test binary, started again and never run), page by page
// through /proc/PID/mem.
func BenchmarkPlant100k(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	sym, err := symtab.Open(self)
	if err != nil {
		b.Fatal(err)
	}
	defer sym.Close()
	// Sites every 8 bytes from the first function on: 800 KB of text.
	first := sym.Funcs[0].Addr
	var specs []breakpoint.SiteSpec
	for k := 0; len(specs) < 100000; k++ {
		a := first + uint64(k)*8
		if _, ok := sym.Code(a, 1); !ok {
			b.Skipf("text too small for 100,000 sites (%d)", len(specs))
		}
		specs = append(specs, breakpoint.SiteSpec{Addr: a, Kind: breakpoint.KindFunc, Func: -1})
	}
	pid, kill := launchFor(b, self, self, "-test.run=^$")
	defer kill()
	bias, err := loadBias(pid, sym.Entry)
	if err != nil {
		b.Fatal(err)
	}
	mem, err := openMem(pid)
	if err != nil {
		b.Fatal(err)
	}
	defer mem.Close()
	t := breakpoint.NewTable(specs, 0)
	t.SetBias(bias)
	var plant, restore time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := time.Now()
		if err := t.Plant(mem); err != nil {
			b.Fatal(err)
		}
		plant += time.Since(s)
		s = time.Now()
		if err := t.Restore(mem); err != nil {
			b.Fatal(err)
		}
		restore += time.Since(s)
	}
	b.ReportMetric(float64(plant.Milliseconds())/float64(b.N), "ms/plant")
	b.ReportMetric(float64(restore.Milliseconds())/float64(b.N), "ms/restore")
	b.ReportMetric(t.BytesPerSite(), "table-bytes/site")
}

// mallocsFor returns the heap allocations of one Run of the calls target with
// n calls of the planted function.
func mallocsFor(tb testing.TB, prog string, n int, engine string) uint64 {
	sym, err := symtab.Open(prog)
	if err != nil {
		tb.Fatal(err)
	}
	defer sym.Close()
	plan := breakpoint.NewPlan(sym, nil, breakpoint.PlanOptions{Funcs: true, FuncFilter: func(s string) bool { return s == "work" }})
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	res, err := Run(Options{Path: prog, Args: []string{prog, strconv.Itoa(n)}, Table: plan.Table, Entry: sym.Entry, Engine: engine})
	if err != nil {
		tb.Fatal(err)
	}
	runtime.ReadMemStats(&b)
	if got := res.Counts[plan.Table].Hits[0]; got != uint64(n) {
		tb.Fatalf("hits %d, want %d", got, n)
	}
	return b.Mallocs - a.Mallocs
}

// BenchmarkHitAllocs reports the heap allocations per hit of each engine:
// the difference between runs of 20,000 and 2,000 hits, divided by 18,000,
// so set-up costs cancel. The hit path is meant to allocate nothing.
func BenchmarkHitAllocs(b *testing.B) {
	calls := buildC(b, callsC)
	for _, engine := range []string{EngineClassic, EngineXOL} {
		b.Run(engine, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var per float64
			for i := 0; i < b.N; i++ {
				small := mallocsFor(b, calls, 2000, engine)
				large := mallocsFor(b, calls, 20000, engine)
				per += (float64(large) - float64(small)) / 18000
			}
			b.ReportMetric(per/float64(b.N), "allocs/hit")
		})
	}
}

// BenchmarkRegisterAccess compares what a hit needs from the registers (read
// RIP and RSP, write RIP) done with the full register set (PTRACE_GETREGS +
// PTRACE_SETREGS, what the engines do) against word by word
// (PTRACE_PEEKUSER twice + PTRACE_POKEUSER), on a stopped target.
func BenchmarkRegisterAccess(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prog := buildC(b, trapLoopC)
	pid, kill := launchFor(b, prog, prog)
	defer kill()
	// Let it run to its first stop (the SIGCONT of the hand-over to
	// PTRACE_SEIZE, or its int3): it then stays in that ptrace-stop for the
	// whole benchmark.
	var ws unix.WaitStatus
	cont(pid, 0)
	if err := waitPid(pid, &ws, unix.WALL); err != nil || !ws.Stopped() {
		b.Fatalf("target did not stop: %v %#x", err, uint32(ws))
	}
	// Both ways are timed here, on this (the tracer's) thread: a
	// sub-benchmark would run on another goroutine, and ptrace answers only
	// the tracer.
	var regs unix.PtraceRegs
	var full, words time.Duration
	for i := 0; i < b.N; i++ {
		s := time.Now()
		for k := 0; k < 1000; k++ {
			if err := unix.PtraceGetRegs(pid, &regs); err != nil {
				b.Fatal(err)
			}
			if err := unix.PtraceSetRegs(pid, &regs); err != nil {
				b.Fatal(err)
			}
		}
		full += time.Since(s)
		s = time.Now()
		for k := 0; k < 1000; k++ {
			rip, err := peekUser(pid, offRip)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := peekUser(pid, offRsp); err != nil {
				b.Fatal(err)
			}
			if err := pokeUser(pid, offRip, rip); err != nil {
				b.Fatal(err)
			}
		}
		words += time.Since(s)
	}
	b.ReportMetric(float64(full.Nanoseconds())/float64(b.N*1000), "getregs+setregs-ns")
	b.ReportMetric(float64(words.Nanoseconds())/float64(b.N*1000), "peek+peek+poke-ns")
}

// syscallsC makes 100,000 getppid system calls and calls f once every 100.
const syscallsC = `#include <unistd.h>
#include <sys/syscall.h>
__attribute__((noinline)) int f(int x) { __asm__ volatile(""); return x + 1; }
int main(void) {
	long s = 0;
	for (int i = 0; i < 100000; i++) {
		s += syscall(SYS_getppid);
		if (i % 100 == 0)
			s += f(i);
	}
	return s > 0 ? 0 : 1;
}
`

// BenchmarkSyscallStops measures what following the target's signal state
// costs (sigstate_linux_amd64.go): every system call stops twice under
// PTRACE_SYSCALL. The program makes 100,000 system calls and 1,000 counted
// calls; the figure is per system call, against the native run.
func BenchmarkSyscallStops(b *testing.B) {
	prog := buildC(b, syscallsC)
	sym, err := symtab.Open(prog)
	if err != nil {
		b.Fatal(err)
	}
	defer sym.Close()
	var native, traced time.Duration
	for i := 0; i < b.N; i++ {
		s := time.Now()
		if err := exec.Command(prog).Run(); err != nil {
			b.Fatal(err)
		}
		native += time.Since(s)
		plan := breakpoint.NewPlan(sym, nil, breakpoint.PlanOptions{Funcs: true, FuncFilter: func(name string) bool { return name == "f" }})
		s = time.Now()
		res, err := Run(Options{Path: prog, Args: []string{prog}, Table: plan.Table, Entry: sym.Entry, Pin: true, Stdout: devNull(b)})
		if err != nil {
			b.Fatal(err)
		}
		traced += time.Since(s)
		k, _ := plan.Table.Index(funcAddr(b, sym, "f"))
		if got := res.Counts[plan.Table].Hits[k]; got != 1000 {
			b.Fatalf("f counted %d, want 1000", got)
		}
	}
	b.ReportMetric(float64(traced)/float64(native), "x-native")
	b.ReportMetric(float64(traced-native)/float64(b.N)/100000/1e3, "µs/syscall")
}
