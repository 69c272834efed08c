package breakpoint

import (
	"runtime"
	"testing"
)

// spreadSpecs returns n line sites, one line each, spread evenly over size
// bytes from address 0x40_0000 (every size/n-th byte).
func spreadSpecs(n, size int) []SiteSpec {
	specs := make([]SiteSpec, n)
	lines := make([]int32, n) // one backing array rather than n small ones
	for i := range specs {
		lines[i] = int32(i)
		specs[i] = SiteSpec{
			Addr:  0x40_0000 + uint64(i)*uint64(size)/uint64(n),
			Kind:  KindLine,
			Func:  int32(i / 64),
			Lines: lines[i : i+1 : i+1],
		}
	}
	return specs
}

// BenchmarkPlant100k plants 100,000 sites over a 4 MiB code region: 1024 pages,
// so planting must cost 1024 writes (and reads), not 100,000.
func BenchmarkPlant100k(b *testing.B) {
	const n, size = 100_000, 4 << 20
	tab := NewTable(spreadSpecs(n, size), n)
	mem := newFakeMemory(0x40_0000, size)
	mem.writtenPages = nil // keep the fake's bookkeeping out of the timing
	writes := 0
	for b.Loop() {
		mem.writes = 0
		if err := tab.Plant(mem); err != nil {
			b.Fatal(err)
		}
		writes += mem.writes
		b.StopTimer()
		if err := tab.Restore(mem); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	if pages := size / PageSize; writes != pages*b.N {
		b.Errorf("%d writes in %d Plants, want %d per Plant (one per page)", writes, b.N, pages)
	}
	b.ReportMetric(float64(writes)/float64(b.N), "writes/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/site")
}

// BenchmarkTableMemory measures the heap a table of a million one-line sites
// holds, against the design's budget of under 100 bytes per site.
func BenchmarkTableMemory(b *testing.B) {
	const n = 1_000_000
	specs := spreadSpecs(n, 40*n)
	var perSite, estimate float64
	var ms runtime.MemStats
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.HeapAlloc
		tab := NewTable(specs, n)
		runtime.GC()
		runtime.ReadMemStats(&ms)
		perSite = float64(int64(ms.HeapAlloc)-int64(before)) / n
		estimate = tab.BytesPerSite()
		runtime.KeepAlive(tab)
	}
	runtime.KeepAlive(specs)
	b.ReportMetric(perSite, "heap-bytes/site")
	b.ReportMetric(estimate, "BytesPerSite")
}
