package profiler

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/monitor"
	"github.com/patchprof/patchprof/profile"
	"github.com/patchprof/patchprof/sampler"
	"github.com/patchprof/patchprof/symtab"
	"github.com/patchprof/patchprof/unwind"
)

// A timeline is what the profiler keeps of a sampled run (--time): every
// layout each process had, stamped with the sampler's clock, and the
// samples resolved through them to module and link-time address. The
// monitor's thread adds layouts; the sampler's goroutine adds samples.
type timeline struct {
	rate   int
	period uint64 // ns of CPU time per sample

	mu      sync.Mutex
	layouts map[int][]stamped // by PID, in time order
	at      map[placeKey]uint64
	chains  map[string]*chain // the sampled call chains, by chainKey
	tabIDs  map[*breakpoint.Table]int
	// procs are the other executable mappings of each process (foreign),
	// files each file's call frame information, nil if none (cfiFile).
	procs map[int]*procMaps
	files map[string]*unwind.Table
	// outsideFiles are the symbols of the files samples fell in that
	// are not counted, nil for one that cannot be read (outsidePlace).
	outsideFiles map[string]*symtab.File
	total        uint64 // every sample delivered
	outside      uint64 // samples outside every profiled module
	lost         uint64
	smp          *sampler.Sampler
	// byPtrace is set when the samples come from the monitor's interrupts
	// (the fallback where perf events are refused).
	byPtrace bool
}

// A stamped is a layout and the time it came into force.
type stamped struct {
	from uint64
	l    monitor.Layout
}

// A placeKey is a link-time address in one image.
type placeKey struct {
	tab  *breakpoint.Table // the image's table: one per module
	addr uint64
}

func newTimeline(rate int) *timeline {
	if rate <= 0 {
		rate = sampler.DefaultRate
	}
	return &timeline{rate: rate, period: sampler.Period(rate), layouts: map[int][]stamped{}, at: map[placeKey]uint64{}, chains: map[string]*chain{}, tabIDs: map[*breakpoint.Table]int{},
		procs: map[int]*procMaps{}, files: map[string]*unwind.Table{}, outsideFiles: map[string]*symtab.File{}}
}

// layout is the monitor's Options.Layout: the process is stopped, so the
// samples stamped after now belong to l.
func (tl *timeline) layout(l monitor.Layout) {
	now := sampler.Now()
	tl.mu.Lock()
	tl.layouts[l.PID] = append(tl.layouts[l.PID], stamped{now, l})
	tl.mu.Unlock()
}

// deliver is the sampler's Config.Deliver: each sample's address goes
// through the layout in force at its time, out of any scratch region, to an
// image and a link-time address.
func (tl *timeline) deliver(batch []sampler.Sample) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for _, s := range batch {
		tl.total++
		hist := tl.layouts[int(s.PID)]
		k := sort.Search(len(hist), func(k int) bool { return hist[k].from > s.Time }) - 1
		if k < 0 {
			tl.outside++
			continue
		}
		l := &hist[k].l
		pc := l.Original(s.IP)
		mp, ok := l.Find(pc)
		if !ok {
			tl.outside++
			if op, ok := tl.outsidePlace(l.PID, pc); ok {
				tl.addOutsideChain(l, op, &s)
			}
			continue
		}
		leaf := placeKey{mp.Image.Table, pc - mp.Bias}
		tl.at[leaf]++
		if ras, ok := tl.walk(l, &s); ok {
			tl.addChain(l, leaf, ras, 0)
		} else {
			tl.addChain(l, leaf, s.Callers, topWord(l, &s))
		}
	}
}

// start opens the sampler on the target's threads, stopped at its first
// stop. It returns a one-line message when the kernel refuses perf events
// (the run goes on without time), and nil otherwise.
func (tl *timeline) start(pid int, attach bool) error {
	tids := []int{pid}
	if attach {
		tids = tasksOf(pid)
	}
	s, err := sampler.Open(tids, sampler.Config{Rate: tl.rate, Deliver: tl.deliver, Callchain: true})
	if err != nil {
		return err
	}
	tl.smp = s
	return nil
}

// tasksOf lists the threads of process pid (/proc/PID/task), or just pid
// when that cannot be read.
func tasksOf(pid int) []int {
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return []int{pid}
	}
	var out []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out
}

// stop closes the sampler after a final drain.
func (tl *timeline) stop() error {
	if tl.smp == nil {
		return nil
	}
	st, err := tl.smp.Close()
	tl.smp = nil
	tl.mu.Lock()
	tl.lost += st.Lost
	tl.mu.Unlock()
	return err
}

// addTime adds the time sampled so far to p: the totals, the sampled
// addresses, and the time of every line, function and block.
func (tl *timeline) addTime(p *profile.Profile, root *module, sel *selection) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	p.Time = &profile.Time{Rate: tl.rate, Samples: tl.total, TimeNS: tl.total * tl.period, Lost: tl.lost}
	mods := map[*breakpoint.Table]*module{root.plan.Table: root}
	names := map[*module]string{root: ""}
	for _, m := range sel.mods {
		if m.counted && m.path != root.sym.Path {
			mods[m.plan.Table] = m
			names[m] = m.path
		}
	}
	if !root.counted {
		delete(mods, root.plan.Table)
	}
	ix := newTimeIndex(p)
	outside := tl.outside
	for k, n := range tl.at {
		m := mods[k.tab]
		if m == nil {
			outside += n
			continue
		}
		s := profile.Sample{Address: profile.Address(k.addr), Module: names[m], Samples: n, TimeNS: n * tl.period}
		if i, ok := m.sym.FuncAt(k.addr); ok {
			s.Function = m.sym.Funcs[i].Name
			ix.addFunc(s.Module, m.sym.Funcs[i].Addr, n, tl.period)
		} else {
			s.Function = m.pltName(k.addr)
		}
		if m.lt != nil {
			if file, line, ok := m.lt.Lookup(k.addr); ok {
				s.File, s.Line = file, line
				ix.addLine(s.Module, file, line, n, tl.period)
			}
		}
		ix.addBlock(s.Module, k.addr, n, tl.period)
		p.Samples = append(p.Samples, s)
	}
	p.Time.Outside, p.Time.OutsideNS = outside, outside*tl.period
	tl.addStacks(p, mods, names)
	p.Sort()
}

// A timeIndex finds the lines, functions and blocks of a profile that a
// sampled address falls in.
type timeIndex struct {
	p      *profile.Profile
	lines  map[lineKey]int
	funcs  map[funcKey]int
	blocks map[string][]int // by module: indexes of p.Blocks by address
}

type lineKey struct {
	module, file string
	line         int
}

type funcKey struct {
	module string
	addr   profile.Address
}

func newTimeIndex(p *profile.Profile) *timeIndex {
	ix := &timeIndex{p: p, lines: map[lineKey]int{}, funcs: map[funcKey]int{}, blocks: map[string][]int{}}
	for i, l := range p.Lines {
		ix.lines[lineKey{l.Module, l.File, l.Line}] = i
	}
	for i, f := range p.Functions {
		ix.funcs[funcKey{f.Module, f.Address}] = i
	}
	for i, b := range p.Blocks {
		ix.blocks[b.Module] = append(ix.blocks[b.Module], i)
	}
	for _, idx := range ix.blocks {
		sort.Slice(idx, func(a, b int) bool { return p.Blocks[idx[a]].Address < p.Blocks[idx[b]].Address })
	}
	return ix
}

func (ix *timeIndex) addLine(module, file string, line int, n, period uint64) {
	if i, ok := ix.lines[lineKey{module, file, line}]; ok {
		ix.p.Lines[i].Samples += n
		ix.p.Lines[i].TimeNS += n * period
	}
}

func (ix *timeIndex) addFunc(module string, entry uint64, n, period uint64) {
	if i, ok := ix.funcs[funcKey{module, profile.Address(entry)}]; ok {
		ix.p.Functions[i].Samples += n
		ix.p.Functions[i].TimeNS += n * period
	}
}

func (ix *timeIndex) addBlock(module string, addr uint64, n, period uint64) {
	idx := ix.blocks[module]
	k := sort.Search(len(idx), func(k int) bool { return uint64(ix.p.Blocks[idx[k]].Address) > addr }) - 1
	if k < 0 {
		return
	}
	if b := &ix.p.Blocks[idx[k]]; addr < uint64(b.End) {
		b.Samples += n
		b.TimeNS += n * period
	}
}

// refusedNote is the note (and the one line said at the start) of a run
// whose time could not be sampled.
func refusedNote(err error) string {
	var ue *sampler.UnavailableError
	if errors.As(err, &ue) {
		return "no CPU time: " + ue.Error() + "; counts are complete"
	}
	return fmt.Sprintf("no CPU time: %v; counts are complete", err)
}

// timeHooks returns the monitor's OnStart, Layout and Interrupt for a run,
// and the function that ends the sampling and adds the time to the profile
// (given nil when the run failed). Without --time they are h.OnStart, nil,
// nil and a function that does nothing.
func (p *Profiler) timeHooks(h Hooks) (onStart func(int), layout func(monitor.Layout), isamp *monitor.InterruptSampling, end func(*profile.Profile)) {
	if !p.cfg.Time {
		return h.OnStart, nil, nil, func(*profile.Profile) {}
	}
	tl := newTimeline(p.cfg.SampleRate)
	fb := &fallback{tl: tl, warn: h.Warn, on: p.cfg.TimeFallback != FallbackNone}
	onStart = func(pid int) {
		// The target is stopped before its first instruction (or every
		// thread of an attached one is held): the events opened now are
		// inherited by every thread and process it creates.
		if err := tl.start(pid, p.target.Attach > 0); err != nil {
			fb.refused(err)
		} else {
			p.mu.Lock()
			p.tl = tl
			p.mu.Unlock()
		}
		if h.OnStart != nil {
			h.OnStart(pid)
		}
	}
	isamp = fb.interrupt(func() {
		p.mu.Lock()
		p.tl = tl
		p.mu.Unlock()
	})
	end = func(prof *profile.Profile) {
		err := tl.stop()
		if prof == nil {
			return
		}
		switch {
		case fb.refusal != nil && !fb.running:
			prof.Notes = append(prof.Notes, refusedNote(fb.refusal))
			return
		case fb.running:
			prof.Notes = append(prof.Notes, fallbackNote(fb.refusal))
		case err != nil:
			prof.Notes = append(prof.Notes, fmt.Sprintf("CPU time may be incomplete: %v", err))
		}
		tl.addTime(prof, p.root, p.sel)
		if t := prof.Time; t.Lost > 0 {
			prof.Notes = append(prof.Notes, fmt.Sprintf("the kernel dropped %d CPU time samples (ring buffers full): times are lower bounds", t.Lost))
		}
	}
	return onStart, tl.layout, isamp, end
}

// topWord returns the word at the top of s's stack as its site saw it:
// past what a trampoline's entry check pushed (Layout.Pushed), 0 when the
// stack copy does not reach it.
func topWord(l *monitor.Layout, s *sampler.Sample) uint64 {
	n := l.Pushed(s.IP)
	if n == 0 {
		return s.Top
	}
	if uint64(len(s.Stack)) < n+8 {
		return 0
	}
	return binary.LittleEndian.Uint64(s.Stack[n:])
}
