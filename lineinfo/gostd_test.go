package lineinfo

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// readGoBoth builds a tiny Go program and reads its line table whole and
// with DeferGoStd.
func readGoBoth(t *testing.T) (exe, src string, full, part *Table) {
	t.Helper()
	exe, src = buildGo(t)
	full, err := Read(exe)
	if err != nil {
		t.Fatal(err)
	}
	part, err = ReadWith(exe, ReadOptions{DeferGoStd: true})
	if err != nil {
		t.Fatal(err)
	}
	return exe, src, full, part
}

// TestReadDeferGoStd reads a Go program's table with DeferGoStd against the
// whole table: the program's own rows are the same, the runtime's are not
// read until Lookup needs one, and then Lookup gives what the whole table
// gives.
func TestReadDeferGoStd(t *testing.T) {
	exe, src, full, part := readGoBoth(t)
	if part.GoRoot() != full.GoRoot() || part.GoRoot() == "" {
		t.Errorf("GoRoot() = %q with DeferGoStd, %q without", part.GoRoot(), full.GoRoot())
	}
	rowsOf := func(tab *Table, keep func(string) bool) []string {
		var out []string
		for _, r := range tab.Rows {
			if f := tab.Files[r.File]; keep(f) {
				out = append(out, fmt.Sprintf("%#x %s:%d", r.Addr, f, r.Line))
			}
		}
		return out
	}
	inRoot := func(f string) bool { return strings.HasPrefix(f, full.GoRoot()) }
	// Only the Go root's code inlined into the program's own is read.
	if got, all := len(rowsOf(part, inRoot)), len(rowsOf(full, inRoot)); got*20 > all {
		t.Errorf("DeferGoStd read %d of the Go root's %d rows", got, all)
	}
	mine := func(f string) bool { return f == src }
	if got, want := rowsOf(part, mine), rowsOf(full, mine); !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("rows of %s with DeferGoStd: %d, want %d", src, len(got), len(want))
	}
	runtimeMain, _ := symbol(t, exe, "runtime.main")
	mainMain, _ := symbol(t, exe, "main.main")
	if _, _, ok := part.LookupRead(runtimeMain); ok {
		t.Errorf("LookupRead(runtime.main) found a line in a unit left unread")
	}
	for _, a := range []uint64{mainMain, runtimeMain, runtimeMain + 8} {
		gf, gl, gok := part.Lookup(a)
		wf, wl, wok := full.Lookup(a)
		if gf != wf || gl != wl || gok != wok || !wok {
			t.Errorf("Lookup(%#x) = %s:%d %v with DeferGoStd, %s:%d %v without", a, gf, gl, gok, wf, wl, wok)
		}
	}
	if gf, _, _ := part.Lookup(runtimeMain); !strings.HasSuffix(gf, "/runtime/proc.go") {
		t.Errorf("Lookup(runtime.main) = %s, want runtime/proc.go", gf)
	}
}
