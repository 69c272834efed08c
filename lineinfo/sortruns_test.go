package lineinfo

import (
	"cmp"
	"math/rand"
	"slices"
	"testing"
)

// TestSortIfNot sorts sorted input, a few sorted runs (merged) and many
// (a full sort) exactly as a stable sort does.
func TestSortIfNot(t *testing.T) {
	type kv struct{ k, v int }
	byK := func(x, y kv) int { return cmp.Compare(x.k, y.k) }
	r := rand.New(rand.NewSource(1))
	for _, runs := range []int{1, 2, 3, 7, 25, 64, 5000} {
		var s []kv
		for k := 0; k < runs; k++ {
			base := r.Intn(100000)
			n := 1 + r.Intn(200)
			for i := 0; i < n; i++ {
				base += r.Intn(3)
				s = append(s, kv{base, len(s)})
			}
		}
		want := slices.Clone(s)
		slices.SortStableFunc(want, byK)
		got := slices.Clone(s)
		sortIfNot(got, byK)
		if !slices.IsSortedFunc(got, byK) {
			t.Fatalf("%d runs: not sorted", runs)
		}
		if runs <= 64 && !slices.Equal(got, want) {
			t.Errorf("%d runs: merge is not stable", runs)
		}
		slices.SortFunc(got, func(x, y kv) int { return cmp.Compare(x.v, y.v) })
		if !slices.Equal(got, s) {
			t.Errorf("%d runs: elements lost or duplicated", runs)
		}
	}
}

// BenchmarkSortIfNot: 25 runs of 3,200 entries, as a Go program's line
// table, against a full sort.
func BenchmarkSortIfNot(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	var s []int
	for k := 0; k < 25; k++ {
		base := r.Intn(1 << 30)
		for i := 0; i < 3200; i++ {
			base += 1 + r.Intn(8)
			s = append(s, base)
		}
	}
	for _, full := range []bool{false, true} {
		name := "runs"
		if full {
			name = "pdqsort"
		}
		b.Run(name, func(b *testing.B) {
			buf := make([]int, len(s))
			for b.Loop() {
				copy(buf, s)
				if full {
					slices.SortFunc(buf, cmp.Compare[int])
				} else {
					sortIfNot(buf, cmp.Compare[int])
				}
			}
		})
	}
}

// TestGCCO0 reads the optimization level from DW_AT_producer.
func TestGCCO0(t *testing.T) {
	for p, want := range map[string]bool{
		"GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O0": true,
		"GNU C17 12.2.0 -mtune=generic -march=x86-64 -g":     true,
		"GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O2": false,
		"GNU C++17 12.2.0 -g -O2 -O0":                        true,
		"GNU C17 12.2.0 -g -Os":                              false,
		"GNU C17 12.2.0 -g -O":                               false,
		"clang version 15.0.7":                               false,
		"Go cmd/compile go1.26":                              false,
	} {
		if got := gccO0(p); got != want {
			t.Errorf("gccO0(%q) = %v, want %v", p, got, want)
		}
	}
}
