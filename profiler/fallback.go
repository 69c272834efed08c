package profiler

import (
	"errors"
	"fmt"

	"github.com/patchprof/patchprof/monitor"
	"github.com/patchprof/patchprof/sampler"
)

// The values of Config.TimeFallback (--time-fallback).
const (
	// FallbackPtrace samples by interrupting the target's threads with
	// ptrace where perf events are refused (monitor.InterruptSampling).
	FallbackPtrace = "ptrace"
	// FallbackNone runs without time where perf events are refused.
	FallbackNone = "none"
)

// A fallback is what --time does when the kernel refuses perf events: the
// refusal, said in one line, and the monitor's interrupt sampling, started
// in its place when Config.TimeFallback allows it. Its fields are used on
// the monitor's thread only.
type fallback struct {
	tl      *timeline
	warn    func(string)
	on      bool  // the user allows the ptrace fallback
	refusal error // why perf events could not be used, nil if they were
	running bool  // the interrupt sampler runs
}

// refused records that sampler.Open failed with err, and says so.
func (f *fallback) refused(err error) {
	f.refusal = err
	var ue *sampler.UnavailableError
	if !f.on || !errors.As(err, &ue) {
		// Only a refusal of the kernel falls back: any other failure (a
		// thread gone) would fail the same way again.
		f.on = false
		f.say(refusedNote(err))
		return
	}
	f.say(fallbackNote(err))
}

func (f *fallback) say(msg string) {
	if f.warn != nil {
		f.warn(msg)
	}
}

// interrupt returns the monitor's Options.Interrupt: it starts when perf
// events were refused and the fallback is allowed, calling started.
func (f *fallback) interrupt(started func()) *monitor.InterruptSampling {
	if !f.on {
		return nil
	}
	var buf []sampler.Sample
	return &monitor.InterruptSampling{
		Rate: f.tl.rate,
		Start: func() bool {
			if f.refusal == nil || !f.on {
				return false
			}
			f.running = true
			f.tl.byPtrace = true
			started()
			return true
		},
		Deliver: func(ss []monitor.Sample) {
			buf = buf[:0]
			for _, s := range ss {
				buf = append(buf, sampler.Sample{PID: uint32(s.PID), TID: uint32(s.TID), Time: s.Time, IP: s.PC})
			}
			f.tl.deliver(buf)
		},
		Fail: func(err error) {
			f.running = false
			f.on = false
			f.tl.byPtrace = false
			f.say(fmt.Sprintf("no CPU time: %v; counts are complete", err))
		},
	}
}

// fallbackNote is the one line said at the start of a run whose time is
// sampled by interrupts, and the profile's note.
func fallbackNote(err error) string {
	why := err.Error()
	var ue *sampler.UnavailableError
	if errors.As(err, &ue) {
		why = fmt.Sprintf("perf_event_open refused (%v)", ue.Err)
	}
	return why + ": CPU time sampled by interrupting the threads with ptrace instead " +
		"(coarser, and each sample stops the target; --time-fallback none runs without time)"
}
