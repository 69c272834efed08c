//go:build linux

package integration

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// TestTrapArc: traparc.c's walk has a block of one nop that its jump
// falls into before the loop head, whose count the others' do not give:
// under the in-process engine the jump's arc into it is counted in the
// trampoline of the block before, and the nop block derived, not left to
// trap at each of its hits. Every block count is known by construction:
// of 100,000 calls (4,000 under the trap engines), three in four run the
// nop, and the loop turns three times in each of those.
func TestTrapArc(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "traparc.c", "-g", "-O2")
	nop, loop := walkNop(t, exe)
	jump := os.Getenv(engineEnv) == "" || os.Getenv(engineEnv) == "jump"
	n := 100000
	if !jump {
		n = 4000 // every hit traps
	}
	res, p := runProfile(t, runOpts{args: []string{"--blocks", exe, strconv.Itoa(n)}})
	wantExitCode(t, res, p, 0)
	if want := fmt.Sprintf("%d\n", 6*n*3/4); res.stdout != want {
		t.Errorf("target's stdout %q, want %q", res.stdout, want)
	}
	counts := map[uint64]int64{}
	for _, s := range p.Sites {
		if a, err := strconv.ParseUint(s.Address, 0, 64); err == nil && s.Kind == "block" {
			counts[a] = s.Count
		}
	}
	if got, ok := counts[nop]; !ok || got != int64(3*n/4) {
		t.Errorf("the nop block at %#x counted %d (%v), want %d", nop, got, ok, 3*n/4)
	}
	if got := counts[loop]; got != int64(3*3*n/4) {
		t.Errorf("the loop head at %#x counted %d, want %d", loop, got, 3*3*n/4)
	}
	if !jump {
		return
	}
	wantFewTraps(t, res, p, 10)
}

// walkNop returns the link-time addresses of the nop in traparc.c's walk
// (the byte after its `je`, rel8) and of the loop head after it.
func walkNop(t *testing.T, exe string) (nop, loop uint64) {
	t.Helper()
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	text := f.Section(".text")
	code, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name != "walk" || elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue
		}
		body := code[s.Value-text.Addr : s.Value-text.Addr+s.Size]
		// The asm's `je 2f; nop; 1: add (%reg), %reg`.
		if k := bytes.Index(body, []byte{0x90, 0x48, 0x03}); k >= 2 && body[k-2] == 0x74 {
			return s.Value + uint64(k), s.Value + uint64(k) + 1
		}
		t.Fatalf("walk's code has no je; nop; add: % x", body)
	}
	t.Fatal("no function walk")
	return 0, 0
}
