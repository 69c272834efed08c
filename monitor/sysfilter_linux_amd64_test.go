//go:build linux && amd64

package monitor

import (
	"encoding/binary"
	"testing"
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
			{auditArchX86_64, sysRtSigaction, [6]uint64{5}, trace, trace},
			{auditArchX86_64, sysRtSigprocmask, [6]uint64{}, trace, trace},
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
