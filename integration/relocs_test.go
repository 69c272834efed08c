//go:build linux

package integration

import (
	"os/exec"
	"testing"
)

// TestRelocatedInstructions plants a site on functions that start with each
// kind of instruction the out-of-line engine relocates (RIP-relative load,
// store, lea and compare with an immediate; call rel32, through memory and a
// register; jmp rel8, rel32 and through memory; jcc rel8 and rel32; loop;
// jrcxz; ret; ret imm16; push; rep movsb; endbr64; syscall; lock cmpxchg)
// and checks that the program computes what it computes natively, with every
// call counted exactly. Under --engine=classic the same counts hold.
func TestRelocatedInstructions(t *testing.T) {
	needs(t)
	t.Parallel()
	for _, flags := range [][]string{{"-g", "-O0"}, {"-g", "-O0", "-no-pie", "-fno-pie"}} {
		exe := buildC(t, "relocs.c", flags...)
		native, err := exec.Command(exe).Output()
		if err != nil {
			t.Fatalf("native run: %v", err)
		}
		res, p := runProfile(t, runOpts{args: []string{"--funcs", exe}})
		wantExitCode(t, res, p, 0)
		if res.stdout != string(native) {
			t.Errorf("%v: target's stdout %q, natively %q", flags, res.stdout, native)
		}
		want := map[string]int64{
			"helper": 5000, "helper_aligned": 1000, "main": 1,
			// r_loop(n) with n = i%5+1 enters loop_entry n times.
			"loop_entry": 3000,
		}
		for _, f := range []string{"r_load", "r_store", "r_lea", "r_cmpimm", "r_call", "r_callmem", "r_callreg",
			"r_jmp8", "r_jmp32", "r_jmpmem", "r_jcc8", "r_jcc32", "r_loop", "r_jrcxz", "r_ret", "r_retimm",
			"r_push", "r_repmovsb", "r_endbr", "r_syscall", "r_cmpxchg",
			"jcc8_entry", "jcc32_entry", "jrcxz_entry", "ret_entry", "retimm_entry", "rep_entry",
			"syscall_entry", "cmpxchg_entry"} {
			want[f] = 1000
		}
		for f, n := range want {
			wantFunc(t, p, f, n)
		}
	}
}
