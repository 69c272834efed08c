//go:build linux

package sampler

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// spinEnv makes the test binary a target for BenchmarkSampling: it waits
// for a byte on stdin, then runs a dependent floating-point loop of the
// given number of iterations.
const spinEnv = "SAMPLER_SPIN"

func TestMain(m *testing.M) {
	if n := os.Getenv(spinEnv); n != "" {
		spin(n)
		return
	}
	os.Exit(m.Run())
}

func spin(arg string) {
	n, _ := strconv.Atoi(arg)
	var b [1]byte
	os.Stdin.Read(b[:])
	x := 0.5
	for i := 0; i < n; i++ {
		x = x*0.999999 + 0.000001
	}
	fmt.Println(x)
	os.Exit(0)
}

// spinOnce runs the spinning target, sampled at rate (0: not sampled), and
// returns the CPU time it used.
func spinOnce(b *testing.B, rate int) time.Duration {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), spinEnv+"=300000000")
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	var s *Sampler
	if rate > 0 {
		s, err = Open([]int{cmd.Process.Pid}, Config{Rate: rate, Deliver: func([]Sample) {}})
		var ue *UnavailableError
		if errors.As(err, &ue) {
			cmd.Process.Kill()
			cmd.Wait()
			b.Skipf("perf events refused here: %v", err)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	in.Write([]byte{1})
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	if s != nil {
		if _, err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// BenchmarkSampling measures what sampling at 1 kHz costs the target: the
// CPU time of a CPU-bound target sampled, against the same target not
// sampled, alternated in one run (sampled/plain; overhead-% is the excess).
func BenchmarkSampling(b *testing.B) {
	var plain, sampled time.Duration
	for i := 0; i < b.N; i++ {
		plain += spinOnce(b, 0)
		sampled += spinOnce(b, 1000)
	}
	r := float64(sampled) / float64(plain)
	b.ReportMetric(r, "sampled/plain")
	b.ReportMetric(100*(r-1), "overhead-%")
	b.ReportMetric(float64(plain.Milliseconds())/float64(b.N), "plain-ms/run")
}
