//go:build linux

package integration

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	pp "github.com/patchprof/patchprof/profile"
)

// TestTimeStacks checks the sampled call chains of --time on a target
// whose calls are known by construction (testdata/stacks.c: main calls
// middle, middle calls work, a leaf without a frame): every sample has
// one chain, every chain sampled in work goes on through middle to main
// (the frame-pointer chain alone would skip middle), and go tool pprof
// -top -cum reads inclusive time from them: middle's and main's at least
// work's own.
func TestTimeStacks(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "stacks.c", "-g", "-O1", "-fno-omit-frame-pointer")
	dir := t.TempDir()
	save := filepath.Join(dir, "p.json")
	res := run(t, runOpts{args: []string{"--funcs", "--time", "--save", save, exe}})
	mustSampleTime(t, res)
	if res.code != 0 {
		t.Fatalf("exit code %d\n%s", res.code, res)
	}
	p, err := pp.Load(save)
	if err != nil {
		t.Fatal(err)
	}
	var inSamples, inStacks, inWork uint64
	for _, s := range p.Samples {
		inSamples += s.Samples
	}
	for _, s := range p.Stacks {
		inStacks += s.Samples
		if s.Frames[0].Function != "work" {
			continue
		}
		inWork += s.Samples
		if len(s.Frames) != 3 || s.Frames[1].Function != "middle" || s.Frames[2].Function != "main" {
			t.Errorf("a chain sampled in work: %+v; want work, middle, main", s.Frames)
		}
	}
	if inStacks != inSamples || inWork == 0 {
		t.Fatalf("%d samples in chains, %d at sampled addresses, %d in work; want the same, and some in work", inStacks, inSamples, inWork)
	}
	out := filepath.Join(dir, "p.pb.gz")
	if r := run(t, runOpts{args: []string{"report", "--format", "pprof", "-o", out, save}}); r.code != 0 {
		t.Fatalf("exit code %d\n%s", r.code, r)
	}
	text, err := exec.Command("go", "tool", "pprof", "-sample_index=cpu", "-top", "-cum", "-unit=ns", "-nodefraction=0", out).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -top -cum: %v\n%s", err, text)
	}
	flat, cum := map[string]uint64{}, map[string]uint64{}
	for _, m := range regexp.MustCompile(`(?m)^\s*(\d+)(?:ns)?\s+\S+%\s+\S+%\s+(\d+)ns\s+\S+%\s+(\S+)$`).FindAllSubmatch(text, -1) {
		f, _ := strconv.ParseUint(string(m[1]), 10, 64)
		c, _ := strconv.ParseUint(string(m[2]), 10, 64)
		flat[string(m[3])], cum[string(m[3])] = f, c
	}
	if flat["work"] == 0 || cum["middle"] < flat["work"] || cum["main"] < cum["middle"] || flat["middle"] >= cum["middle"] {
		t.Errorf("go tool pprof -top -cum: work %d ns flat, middle %d cum (%d flat), main %d cum; want middle's and main's cum at least work's flat\n%s",
			flat["work"], cum["middle"], flat["middle"], cum["main"], text)
	}
}
