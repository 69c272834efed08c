package profile

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A Time is the CPU time sampled during a run (--time): every thread of the
// target was sampled on its own CPU clock, in user space, Rate times per
// second of its CPU time. Lines, functions and blocks carry their share
// (their Samples and TimeNS fields); Samples in the profile lists the
// sampled addresses.
type Time struct {
	// Rate is the sample rate in Hz; 0 in a merge of profiles sampled at
	// different rates.
	Rate int `json:"rate_hz"`
	// Samples is the number of samples taken of the target's threads.
	Samples uint64 `json:"samples"`
	// TimeNS is the CPU time they stand for, in nanoseconds.
	TimeNS uint64 `json:"time_ns"`
	// Outside is how many of them fell outside the profiled code (system
	// libraries, the dynamic linker, processes not followed), and
	// OutsideNS their time.
	Outside   uint64 `json:"outside_samples,omitempty"`
	OutsideNS uint64 `json:"outside_ns,omitempty"`
	// Lost is how many samples the kernel dropped (a full ring buffer).
	Lost uint64 `json:"lost,omitempty"`
}

// A Sample is the CPU time sampled at one address of the profiled code: a
// sample in a scratch region of patchprof's (an out-of-line slot) is
// credited to the instruction it stands for.
type Sample struct {
	// Address is the link-time address in Module.
	Address Address `json:"address"`
	// Module is the path of the module; "" is the profile's executable.
	Module string `json:"module,omitempty"`
	// Function is the symbol whose code holds Address, "" if none.
	Function string `json:"function,omitempty"`
	// File and Line are the source line of Address, when known.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Samples is the number of samples at Address, TimeNS their CPU time.
	Samples uint64 `json:"samples"`
	TimeNS  uint64 `json:"time_ns"`
}

// HasTime reports whether p sampled CPU time.
func (p *Profile) HasTime() bool { return p.Time != nil }

// sortSamples puts the sampled addresses in canonical order.
func (p *Profile) sortSamples() {
	slices.SortStableFunc(p.Samples, func(a, b Sample) int {
		return cmp.Or(strings.Compare(a.Module, b.Module), cmp.Compare(a.Address, b.Address))
	})
}

// validateTime checks the sampled addresses: known modules, no address
// twice.
func (p *Profile) validateTime(modules map[string]bool) error {
	seen := make(map[modAddr]bool, len(p.Samples))
	for i, s := range p.Samples {
		field := "samples[" + strconv.Itoa(i) + "]"
		if !modules[s.Module] {
			return &FormatError{Field: field + ".module", Msg: fmt.Sprintf("%q is not in modules", s.Module)}
		}
		k := modAddr{s.Module, s.Address}
		if seen[k] {
			return &FormatError{Field: field, Msg: fmt.Sprintf("address %s listed twice", s.Address)}
		}
		seen[k] = true
	}
	if len(p.Samples) > 0 && p.Time == nil {
		return &FormatError{Field: "samples", Msg: "sampled addresses without time"}
	}
	return nil
}

// mergeTime adds the time of p to out (Merge): totals, and the sampled
// addresses by module and address.
func mergeTime(out, p *Profile, idx map[modAddr]int, sat *saturator) {
	if p.Time == nil {
		return
	}
	if out.Time == nil {
		t := *p.Time
		out.Time = &t
	} else {
		if out.Time.Rate != p.Time.Rate {
			out.Time.Rate = 0
		}
		sat.add(&out.Time.Samples, p.Time.Samples)
		sat.add(&out.Time.TimeNS, p.Time.TimeNS)
		sat.add(&out.Time.Outside, p.Time.Outside)
		sat.add(&out.Time.OutsideNS, p.Time.OutsideNS)
		sat.add(&out.Time.Lost, p.Time.Lost)
	}
	for _, s := range p.Samples {
		k := modAddr{s.Module, s.Address}
		if i, ok := idx[k]; ok {
			sat.add(&out.Samples[i].Samples, s.Samples)
			sat.add(&out.Samples[i].TimeNS, s.TimeNS)
			continue
		}
		idx[k] = len(out.Samples)
		out.Samples = append(out.Samples, s)
	}
	mergeStacks(out, p, sat)
}
