package cfg

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// benchBinary returns the executable BenchmarkBuildAll works on:
// $CFG_BENCH_BINARY (patchprof itself, say: go build -o /tmp/pp
// ./cmd/patchprof), or else the go command, a Go executable of about
// 15 MB that is there whenever the tests can run.
func benchBinary(b *testing.B) string {
	if p := os.Getenv("CFG_BENCH_BINARY"); p != "" {
		return p
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		b.Skipf("go not found in PATH: %v", err)
	}
	p, err := filepath.EvalSymlinks(goTool)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkBuildAll builds the graph of every function of a large Go
// executable (the go command, or $CFG_BENCH_BINARY) per op. It reports
// the functions, how many are not recoverable, the peak heap in use
// while building (sampled every 256 functions, including the executable's
// code, which symtab holds) and the bytes allocated per op.
func BenchmarkBuildAll(b *testing.B) {
	exe := openBinary(b, benchBinary(b))
	type fn struct {
		name string
		addr uint64
		code []byte
	}
	var fns []fn
	var size int
	for _, f := range exe.st.Funcs {
		code, ok := exe.st.Code(f.Addr, int(f.Size))
		if ok {
			fns = append(fns, fn{f.Name, f.Addr, code})
			size += len(code)
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	peak := ms.HeapInuse
	b.ResetTimer()
	bad := 0
	for i := 0; i < b.N; i++ {
		bad = 0
		for k, f := range fns {
			_, err := Build(Options{Name: f.name, Addr: f.addr, Code: f.code, Image: exe.im, CalleeName: exe.names})
			if err != nil {
				bad++
			}
			if k%256 == 0 {
				b.StopTimer()
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
				b.StartTimer()
			}
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.HeapInuse)
	b.ReportMetric(float64(bad), "unrecoverable")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(ms.TotalAlloc-before)/float64(b.N)/(1<<20), "alloc-MB/op")
	b.ReportMetric(float64(size)/(1<<20), "code-MB")
	b.ReportMetric(float64(len(fns)), "funcs")
	if st, err := os.Stat(exe.path); err == nil {
		b.ReportMetric(float64(st.Size())/(1<<20), "file-MB")
	}
}
