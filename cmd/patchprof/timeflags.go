package main

import (
	"flag"

	"github.com/patchprof/patchprof/output"
	"github.com/patchprof/patchprof/profiler"
	"github.com/patchprof/patchprof/sampler"
)

// timeFlags are --time, --sample-rate and --time-fallback.
type timeFlags struct {
	time     bool
	rate     int
	fallback string
}

func registerTimeFlags(fs *flag.FlagSet) *timeFlags {
	t := &timeFlags{}
	fs.BoolVar(&t.time, "time", false, "also sample the CPU time of every thread of the target (perf events, user space): the listing and function table show each line's and function's share of the time and its time per execution")
	fs.IntVar(&t.rate, "sample-rate", sampler.DefaultRate, "with --time: take `HZ` samples per second of each thread's CPU time")
	fs.StringVar(&t.fallback, "time-fallback", profiler.FallbackPtrace, "with --time, where the kernel refuses perf events: `HOW` to go on, ptrace (sample by interrupting the threads: coarser, and each sample stops the target) or none (run without time)")
	return t
}

// check refuses a rate the kernel would not honour.
func (t *timeFlags) check() error {
	if t.rate <= 0 || t.rate > sampler.MaxRate {
		return failed("--sample-rate %d: give a rate from 1 to %d Hz", t.rate, sampler.MaxRate)
	}
	if t.fallback != profiler.FallbackPtrace && t.fallback != profiler.FallbackNone {
		return failed("--time-fallback %q: use ptrace or none", t.fallback)
	}
	return nil
}

// viewFlags are --sort and --heat, for runs and for patchprof report.
type viewFlags struct {
	sort, heat string
}

func (v *viewFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&v.sort, "sort", "auto", "sort --top's lines and the function table by `KEY`: count, time (the sampled CPU time of --time), or auto (time when the profile has it)")
	fs.StringVar(&v.heat, "heat", "count", "what the listing's colours and the HTML page's shading measure, `KEY` is count or time")
}

// apply sets opt's Sort and Heat.
func (v *viewFlags) apply(opt *output.Options) error {
	s, err := output.ParseKey(v.sort)
	if err != nil {
		return failed("--sort %q: use count, time or auto", v.sort)
	}
	h, err := output.ParseKey(v.heat)
	if err != nil || h == output.KeyAuto {
		return failed("--heat %q: use count or time", v.heat)
	}
	opt.Sort, opt.Heat = s, h
	return nil
}
