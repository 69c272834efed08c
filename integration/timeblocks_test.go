//go:build linux

package integration

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// blockTimes is the part of a saved --time --blocks profile these tests
// read, as docs/profile-format.md documents it.
type blockTimes struct {
	Time *struct {
		Samples uint64 `json:"samples"`
		TimeNS  uint64 `json:"time_ns"`
	} `json:"time"`
	Functions []struct {
		Name    string `json:"name"`
		Address string `json:"address"`
		Count   uint64 `json:"count"`
		Samples uint64 `json:"samples"`
		TimeNS  uint64 `json:"time_ns"`
	} `json:"functions"`
	Blocks []timedBlock `json:"blocks"`
}

type timedBlock struct {
	Address  string `json:"address"`
	Function string `json:"function"`
	Module   string `json:"module"`
	Count    uint64 `json:"count"`
	Samples  uint64 `json:"samples"`
	TimeNS   uint64 `json:"time_ns"`
}

func loadBlockTimes(t *testing.T, path string) *blockTimes {
	t.Helper()
	return loadJSON[blockTimes](t, path)
}

// loopOf returns the block of function name that ran most: in costs.c the
// dependent loop, ITERS (2,000,000) or 3*ITERS passes a call at -O1.
func (p *blockTimes) loopOf(t *testing.T, name string) timedBlock {
	t.Helper()
	addr := ""
	for _, f := range p.Functions {
		if f.Name == name {
			addr = f.Address
		}
	}
	var loop timedBlock
	for _, b := range p.Blocks {
		if b.Module == "" && b.Function == addr && b.Count > loop.Count {
			loop = b
		}
	}
	if addr == "" || loop.Count == 0 {
		t.Fatalf("no function %s with a block that ran in the profile", name)
	}
	return loop
}

// TestTimeBlocksDisasm runs costs.c under --time --blocks --disasm
// 'once|thrice': the samples resolve to the blocks, thrice's loop holding
// 3 times the time of once's (within the function check's 15%) over
// exactly 3 times the passes, no function's blocks hold more samples than
// the function, and the disassembly shows each block's time columns with
// the saved samples.
func TestTimeBlocksDisasm(t *testing.T) {
	needs(t)
	if e := os.Getenv(engineEnv); e == "xol" || e == "classic" {
		// Under a trap engine each of the loops' 1.6 billion passes
		// would be a stop (hours); the in-process engine counts them
		// in the target, where the time is the loop's own.
		t.Skipf("a --blocks run of costs.c's loops: the in-process engine's, not %s=%s", engineEnv, e)
	}
	fp, res, save := timedRun(t, []string{"--blocks", "--disasm", "^(once|thrice)$"})
	checkRatio(t, fp, 200)
	p := loadBlockTimes(t, save)
	once, thrice := p.loopOf(t, "once"), p.loopOf(t, "thrice")
	if once.Count != 200*2000000 || thrice.Count != 3*once.Count {
		t.Errorf("loop passes: once %d, thrice %d; want 400000000 and 1200000000", once.Count, thrice.Count)
	}
	if once.Samples == 0 {
		t.Fatalf("once's loop %s has no samples", once.Address)
	}
	ratio := float64(thrice.TimeNS) / float64(once.TimeNS)
	t.Logf("loops: thrice %d samples, once %d: ratio %.3f", thrice.Samples, once.Samples, ratio)
	if ratio < 3*0.85 || ratio > 3*1.15 {
		t.Errorf("loop time ratio thrice/once = %.3f, want 3 within 15%%", ratio)
	}
	for _, f := range p.Functions {
		var sum uint64
		for _, b := range p.Blocks {
			if b.Module == "" && b.Function == f.Address {
				sum += b.Samples
			}
		}
		if sum > f.Samples {
			t.Errorf("function %s: its blocks hold %d samples, the function %d", f.Name, sum, f.Samples)
		}
	}
	// Both loops hold nearly all of their functions' samples: the time
	// went to the block it was spent in, not only to the function.
	for name, loop := range map[string]timedBlock{"once": once, "thrice": thrice} {
		for _, f := range p.Functions {
			if f.Name == name && float64(loop.Samples) < 0.9*float64(f.Samples) {
				t.Errorf("%s's loop holds %d of its %d samples, want over 90%%", name, loop.Samples, f.Samples)
			}
		}
	}

	if !regexp.MustCompile(`(?m)^\s*COUNT\s+TIME\s+PER EXEC\s+SAMPLES\s+ADDRESS\s+INSTRUCTION$`).MatchString(res.stderr) {
		t.Fatalf("the disassembly has no time columns:\n%s", tail(res.stderr))
	}
	for name, loop := range map[string]timedBlock{"once": once, "thrice": thrice} {
		addr := strings.TrimPrefix(loop.Address, "0x")
		re := regexp.MustCompile(`(?m)^\s*` + strconv.FormatUint(loop.Count, 10) + `\s+~?[0-9.]+%\s+~?[0-9.]+(?:ns|µs|ms|s)\s+` +
			strconv.FormatUint(loop.Samples, 10) + `\s+` + addr + `:  `)
		if !re.MatchString(res.stderr) {
			t.Errorf("--disasm does not show %s's loop %s with count %d and %d samples:\n%s", name, loop.Address, loop.Count, loop.Samples, tail(res.stderr))
		}
	}
}

// TestTimeHTML: an HTML report of a --time run has the function table's
// time columns, with each function's saved samples, sorted by time.
func TestTimeHTML(t *testing.T) {
	needs(t)
	page := filepath.Join(t.TempDir(), "costs.html")
	fp, _, _ := timedRun(t, []string{"--format", "html", "-o", page})
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if !strings.Contains(doc, `<th data-key="time" data-num="1">time</th><th data-key="percall" data-num="1">per call</th><th data-key="samples" data-num="1">samples</th>`) {
		t.Fatalf("the function table has no time columns:\n%s", tail(doc))
	}
	row := regexp.MustCompile(`<tr><td class="num[^"]*">(\d+)</td><td class="num" data-v="(\d+)">(~?[0-9.]+%|-)</td><td class="num" data-v="\d*">[^<]*</td><td class="num">(\d+)</td><td class="name">([^<]*)</td>`)
	var order []string
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		order = append(order, m[5])
		for _, f := range fp.Functions {
			if f.Name == m[5] && (m[1] != strconv.FormatUint(f.Count, 10) || m[4] != strconv.FormatUint(f.Samples, 10) || m[2] != m[4]) {
				t.Errorf("row of %s: count %s, samples %s (key %s); the profile's %d, %d", f.Name, m[1], m[4], m[2], f.Count, f.Samples)
			}
		}
	}
	if len(order) < 2 || order[0] != "thrice" || order[1] != "once" {
		t.Errorf("function table order %v, want thrice then once (by time)", order)
	}
}

// TestTimeMetrics scrapes /metrics of a --time run of spincommand.c (work
// is a loop of about 1.5 ms, called only when told): while the target
// waits, patchprof_function_cpu_seconds_total of work stays put, and it
// equals the saved profile's time of work at the end, with the calls
// beside it. promtool lints the exposition when installed.
func TestTimeMetrics(t *testing.T) {
	needs(t)
	exe := buildC(t, "spincommand.c", "-g", "-O1")
	s := startServedOn(t, exe, "--time", "--listen", "127.0.0.1:0")
	if strings.Contains(s.stderr.String(), "perf_event_open refused") {
		t.Skipf("perf events refused here: %s", s.stderr)
	}
	series := fmt.Sprintf(`{module=%q,function="work"}`, exe)
	var prev float64
	for _, n := range []int{150, 100} {
		total := s.ask(n)
		body, cpu := settledCPU(t, s, series)
		if cpu <= prev {
			t.Errorf("after %d more calls, work's CPU seconds %g, before %g; want more", n, cpu, prev)
		}
		prev = cpu
		if want := fmt.Sprintf("patchprof_function_calls_total%s %d\n", series, total); !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
		if promtool, err := exec.LookPath("promtool"); err == nil {
			lint := exec.Command(promtool, "check", "metrics")
			lint.Stdin = strings.NewReader(body)
			if msg, err := lint.CombinedOutput(); err != nil {
				t.Errorf("promtool check metrics: %v\n%s\n%s", err, msg, body)
			}
		}
	}
	s.in.Close()
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("patchprof: %v\n%s", err, s.stderr)
	}
	p := loadBlockTimes(t, s.save)
	for _, f := range p.Functions {
		if f.Name != "work" {
			continue
		}
		t.Logf("work: %d calls, %d samples, %g s scraped", f.Count, f.Samples, prev)
		if f.Count != 250 || f.Samples == 0 {
			t.Errorf("saved work: %d calls, %d samples; want 250 calls, some samples", f.Count, f.Samples)
		}
		if want := float64(f.TimeNS) / 1e9; want != prev {
			t.Errorf("scraped CPU seconds of work %g, saved %g (%d ns)", prev, want, f.TimeNS)
		}
		return
	}
	t.Errorf("no function work in the saved profile")
}

// cpuRE reads a sample of patchprof_function_cpu_seconds_total.
var cpuRE = regexp.MustCompile(`(?m)^patchprof_function_cpu_seconds_total(\{[^}]*\}) (\S+)$`)

// settledCPU scrapes /metrics until work's CPU seconds (series) are above
// zero and the same in two scrapes 300 ms apart (the sampler drains its
// rings every 50 ms; the target sits waiting for input), and returns the
// last body and the value.
func settledCPU(t *testing.T, s *served, series string) (string, float64) {
	t.Helper()
	last, body := math.NaN(), ""
	for deadline := time.Now().Add(eventBound); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		var code int
		code, body = getURL(t, s.base+"/metrics")
		if code != 200 {
			t.Fatalf("/metrics: %d\n%s", code, body)
		}
		v := math.NaN()
		for _, m := range cpuRE.FindAllStringSubmatch(body, -1) {
			if m[1] == series {
				v, _ = strconv.ParseFloat(m[2], 64)
			}
		}
		if math.IsNaN(v) {
			t.Fatalf("/metrics has no patchprof_function_cpu_seconds_total%s:\n%s", series, body)
		}
		if v > 0 && v == last {
			if !strings.Contains(body, "\npatchprof_target_cpu_seconds_total ") {
				t.Errorf("/metrics has no patchprof_target_cpu_seconds_total:\n%s", body)
			}
			return body, v
		}
		last = v
	}
	t.Fatalf("work's CPU seconds did not settle above 0 in %v:\n%s", eventBound, body)
	return "", 0
}

// TestTimeMetricsPrometheus: a real Prometheus server scrapes a --time
// run of spincommand.c, and work's patchprof_function_cpu_seconds_total
// read back through its query API equals the value patchprof serves once
// the target waits, which equals the saved profile's.
func TestTimeMetricsPrometheus(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skipf("prometheus not found in PATH (%v): the test scrapes with a real Prometheus server (Debian package prometheus)", err)
	}
	needs(t)
	exe := buildC(t, "spincommand.c", "-g", "-O1")
	s := startServedOn(t, exe, "--time", "--listen", "127.0.0.1:0")
	if strings.Contains(s.stderr.String(), "perf_event_open refused") {
		t.Skipf("perf events refused here: %s", s.stderr)
	}
	waitFor := startPrometheus(t, prom, s.base)
	waitFor(`up{job="patchprof"}`, "1")
	series := fmt.Sprintf(`{module=%q,function="work"}`, exe)
	s.ask(200)
	_, cpu := settledCPU(t, s, series)
	// Prometheus' API writes a float in the shortest form that reads back
	// as the same float64 ('f', -1); patchprof's exposition does too ('g').
	waitFor(`patchprof_function_cpu_seconds_total{job="patchprof",function="work"}`, strconv.FormatFloat(cpu, 'f', -1, 64))
	s.in.Close()
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("patchprof: %v\n%s", err, s.stderr)
	}
	p := loadBlockTimes(t, s.save)
	for _, f := range p.Functions {
		if f.Name == "work" && float64(f.TimeNS)/1e9 != cpu {
			t.Errorf("Prometheus read %g CPU seconds of work, the saved profile has %d ns", cpu, f.TimeNS)
		}
	}
}
