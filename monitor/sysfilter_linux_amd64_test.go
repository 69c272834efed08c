//go:build linux && amd64

package monitor

import (
	"encoding/binary"
	"runtime"
	"strconv"
	"testing"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/symtab"
)

// runFilter interprets the classic BPF program prog (the few instructions
// buildFilter emits) over struct seccomp_data for call nr with args.
func runFilter(t *testing.T, prog []byte, arch, nr uint32, args [6]uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.LittleEndian.PutUint32(data[0:], nr)
	binary.LittleEndian.PutUint32(data[4:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(data[16+8*i:], a)
	}
	var acc uint32
	for pc, steps := 0, 0; steps < 1000; steps++ {
		if pc < 0 || 8*pc >= len(prog) {
			t.Fatalf("pc %d out of the program", pc)
		}
		w := prog[8*pc:]
		code := binary.LittleEndian.Uint16(w)
		jt, jf := int(w[2]), int(w[3])
		k := binary.LittleEndian.Uint32(w[4:])
		pc++
		switch code {
		case bpfLdAbsW:
			acc = binary.LittleEndian.Uint32(data[k:])
		case bpfJeqK, bpfJgeK, bpfJsetK:
			ok := code == bpfJeqK && acc == k || code == bpfJgeK && acc >= k || code == bpfJsetK && acc&k != 0
			if ok {
				pc += jt
			} else {
				pc += jf
			}
		case bpfJa:
			pc += int(k)
		case bpfRetK:
			return k
		default:
			t.Fatalf("unknown instruction %#x", code)
		}
	}
	t.Fatal("the program does not end")
	return 0
}

func TestFilter(t *testing.T) {
	trace, allow := uint32(seccompRetTrace|filterData), uint32(seccompRetAllow)
	for _, tty := range [][]uint32{nil, {0, 2}} {
		prog := buildFilter(filterRules(tty))
		for _, c := range []struct {
			arch, nr uint32
			args     [6]uint64
			want     uint32
			wantTTY  uint32
		}{
			{auditArchX86_64, sysWrite, [6]uint64{3}, allow, allow},
			{auditArchX86_64, sysWrite, [6]uint64{2}, allow, trace},
			{auditArchX86_64, sysWrite, [6]uint64{1}, allow, allow},
			{auditArchX86_64, sysRead, [6]uint64{0}, allow, trace},
			{auditArchX86_64, sysSplice, [6]uint64{0, 0, 2}, allow, trace},
			{auditArchX86_64, sysDup2, [6]uint64{5, 1}, allow, trace},
			{auditArchX86_64, sysDup, [6]uint64{5}, allow, trace},
			{auditArchX86_64, sysFcntl, [6]uint64{5, fDupfdCloexec}, allow, trace},
			{auditArchX86_64, sysFcntl, [6]uint64{5, 3}, allow, allow},
			{auditArchX86_64, sysClose, [6]uint64{5}, allow, allow},
			{auditArchX86_64, sysClose, [6]uint64{2}, allow, trace},
			{auditArchX86_64, sysGetpid, [6]uint64{}, allow, allow},
			{auditArchX86_64, sysRtSigaction, [6]uint64{5, 0x7ffc1000}, trace, trace},
			{auditArchX86_64, sysRtSigaction, [6]uint64{5, 0x7ffc00000000}, trace, trace}, // only the high word set
			{auditArchX86_64, sysRtSigaction, [6]uint64{5, 0, 0x7ffc1000}, allow, allow},  // a query
			{auditArchX86_64, sysRtSigprocmask, [6]uint64{0, 0x7ffc1000}, trace, trace},
			{auditArchX86_64, sysRtSigprocmask, [6]uint64{2, 0x100000000}, trace, trace},
			{auditArchX86_64, sysRtSigprocmask, [6]uint64{0, 0, 0x7ffc1000}, allow, allow}, // a query
			{auditArchX86_64, sysRtSigreturn, [6]uint64{}, trace, trace},
			{auditArchX86_64, sysRtSigsuspend, [6]uint64{}, trace, trace},
			{auditArchX86_64, sysPpoll, [6]uint64{}, allow, allow},
			{auditArchX86_64, sysMunmap, [6]uint64{}, trace, trace},
			{auditArchX86_64, sysMremap, [6]uint64{}, trace, trace},
			{auditArchX86_64, sysMprotect, [6]uint64{}, trace, trace},
			{auditArchX86_64, sysPkeyMprotect, [6]uint64{}, trace, trace},
			{auditArchX86_64, sysSeccomp, [6]uint64{}, trace, trace},
			{auditArchX86_64, sysMmap, [6]uint64{0, 4096, 3}, allow, allow},
			{auditArchX86_64, sysMmap, [6]uint64{0, 4096, 5}, trace, trace},
			{auditArchX86_64, sysMadvise, [6]uint64{0, 4096, madvDontneed}, trace, trace},
			{auditArchX86_64, sysMadvise, [6]uint64{0, 4096, 8}, allow, allow},
			{auditArchX86_64, sysPrctl, [6]uint64{prSetSeccomp}, trace, trace},
			{auditArchX86_64, sysPrctl, [6]uint64{prGetSeccomp}, trace, trace},
			{auditArchX86_64, sysPrctl, [6]uint64{15}, allow, allow},
			{auditArchX86_64, sysArchPrctl, [6]uint64{archSetGS}, trace, trace},
			{auditArchX86_64, sysArchPrctl, [6]uint64{0x1002}, allow, allow},
			{auditArchX86_64, x32SyscallBit | 1, [6]uint64{}, trace, trace},
			{0x40000003, 4, [6]uint64{}, trace, trace}, // i386, int 0x80
		} {
			want := c.want
			if tty != nil {
				want = c.wantTTY
			}
			if got := runFilter(t, prog, c.arch, c.nr, c.args); got != want {
				t.Errorf("tty %v: call %d %x (arch %#x): %#x, want %#x", tty, c.nr, c.args, c.arch, got, want)
			}
		}
	}
}

// memCallsC makes n rounds of the calls the filter stops at but whose
// exits leave the monitor nothing to do: mprotect of a data page
// (read-only and back), munmap of a page it mapped, madvise(MADV_DONTNEED)
// of another, a new action for SIGTRAP (a handler or SIG_IGN by turns),
// SIGTRAP blocked or not (SIG_SETMASK, by turns of two), then one call of
// f (a trap of the monitor's under the trap engines, after which the
// kernel has reset an ignored SIGTRAP and unblocked a blocked one, and the
// monitor puts back the action and mask it knows), a query of that action
// and one of the mask. It checks that each call did what it should, that
// the action and mask are the ones it set, and at the end that SIGTRAP
// reaches the handler.
const memCallsC = `#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
static volatile sig_atomic_t got;
static void on(int sig) { got = sig; }
__attribute__((noinline)) int f(int x) { return x + 1; }
int main(int argc, char **argv) {
	int n = atoi(argv[1]), s = 0;
	char *keep = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (keep == MAP_FAILED) return 2;
	for (int i = 0; i < n; i++) {
		if (mprotect(keep, 4096, PROT_READ) || mprotect(keep, 4096, PROT_READ | PROT_WRITE)) return 3;
		keep[0] = 'k';
		char *p = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) return 4;
		p[0] = 'p';
		if (madvise(keep, 4096, MADV_DONTNEED) || keep[0] != 0) return 5;
		if (munmap(p, 4096)) return 6;
		struct sigaction sa, old;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = i % 2 ? on : SIG_IGN;
		sigset_t set, m;
		sigemptyset(&set);
		if (i % 4 < 2) sigaddset(&set, SIGTRAP);
		if (sigaction(SIGTRAP, &sa, 0) || sigprocmask(SIG_SETMASK, &set, 0)) return 8;
		s = f(s);
		if (sigaction(SIGTRAP, 0, &old) || old.sa_handler != sa.sa_handler) return 12;
		if (sigprocmask(SIG_BLOCK, 0, &m) || sigismember(&m, SIGTRAP) != (i % 4 < 2)) return 9;
	}
	sigset_t none;
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, 0)) return 13;
	if (n % 2 == 0 && n > 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on;
		if (sigaction(SIGTRAP, &sa, 0)) return 10;
	}
	if (n > 0 && (raise(SIGTRAP) || got != SIGTRAP)) return 11;
	printf("%d\n", s);
	return s == n ? 0 : 7;
}`

// TestIdleExits runs memCallsC under each engine with n = 0 and n = 200: f
// is counted n times, the program exits 0, and each of the 6n calls of its
// rounds that change something costs one stop, the filter's before it, no
// syscall-exit-stop after (exitIdle); the 2n queries cost none.
func TestIdleExits(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prog := buildC(t, memCallsC)
	sym, err := symtab.Open(prog)
	if err != nil {
		t.Fatal(err)
	}
	defer sym.Close()
	for _, engine := range []string{EngineClassic, EngineXOL, EngineJump} {
		stops := map[int]int{}
		for _, n := range []int{0, 200} {
			plan := breakpoint.NewPlan(sym, nil, breakpoint.PlanOptions{Funcs: true, Jumps: engine == EngineJump,
				FuncFilter: func(name string) bool { return name == "f" }})
			res, err := Run(Options{Path: prog, Args: []string{prog, strconv.Itoa(n)}, Table: plan.Table, Entry: sym.Entry,
				Engine: engine, Stdout: devNull(t)})
			if err != nil {
				t.Fatalf("%s, n=%d: %v", engine, n, err)
			}
			if res.Exit.Code != 0 || res.Exit.Signal != 0 {
				t.Fatalf("%s, n=%d: exit %+v, want 0", engine, n, res.Exit)
			}
			k, _ := plan.Table.Index(funcAddr(t, sym, "f"))
			if got := res.Counts[plan.Table].Hits[k]; got != uint64(n) {
				t.Errorf("%s, n=%d: f counted %d, want %d", engine, n, got, n)
			}
			stops[n] = res.SyscallStops
		}
		// Of a round's 8 calls, the two queries (sigaction and
		// sigprocmask without a new value) are let through by the
		// filter. n = 200 makes one more sigaction and the raise (a
		// kill, not stopped at) than n = 0, and the rt_sigreturn of
		// the handler, which keeps its exit (the mask it restores).
		if d := stops[200] - stops[0]; d != 6*200+1+2 {
			t.Errorf("%s: %d system-call stops for 200 rounds of 6 calls stopped at (%d and %d in all), want one a call and 3 more: 1203",
				engine, d, stops[200], stops[0])
		}
	}
}
