package watch

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// DefaultPoll is how often a Watcher looks for new processes by default: a
// process that starts is attached to within about this long (plus the
// attach itself), and its calls before that are not counted.
const DefaultPoll = 100 * time.Millisecond

// EventsFallback is how often a Watcher woken by the kernel's process
// events looks anyway: a process moved into a watched cgroup, or an event
// the kernel dropped, brings no event.
const EventsFallback = 2 * time.Second

// DefaultMaxProcs is how many processes a Watcher watches at once by
// default.
const DefaultMaxProcs = 64

// Options configure a Watcher.
type Options struct {
	// Select lists the processes wanted.
	Select Selector
	// Patchprof is the patchprof executable each process is attached with
	// (patchprof ARGS --save FILE -p PID), and Args its counting flags.
	Patchprof string
	Args      []string
	// Dir holds each process's profile, PID-START.json, kept after the
	// watch; "" uses a temporary directory, removed at the end.
	Dir string
	// Poll is how often Select is called (0: DefaultPoll); Interval how
	// often the aggregate of the moment is saved while watching (0: only
	// on request and at the end); MaxProcs how many processes are watched at once (0:
	// DefaultMaxProcs).
	Poll, Interval time.Duration
	MaxProcs       int
	// NoEvents keeps to polling where the kernel's process events
	// connector could wake the watch instead.
	NoEvents bool
	// Save is given the aggregate at each Interval, on each snapshot
	// request (Run's snap) and at the end.
	Save func(builds []Build, final bool)
	// Log is where the watch says what it does, one "patchprof: " line
	// each.
	Log io.Writer
}

// A Watcher watches the processes a Selector finds, one child patchprof
// attached to each, and sums their profiles.
type Watcher struct {
	opt  Options
	dir  string
	temp bool

	mu      sync.Mutex
	recs    map[Proc]*Record
	order   []*Record
	kids    map[*Record]*child
	refused map[Proc]bool // said once each
	// attaches counts the processes attached to; failures the refusals,
	// by Reason.
	attaches int
	failures map[string]int
	logMu    sync.Mutex
	wg       sync.WaitGroup
	// snapMu makes one snapshot at a time: each asks every child.
	snapMu sync.Mutex
	// closeEvents leaves the process events connector, if joined; evs
	// are the processes its events named since the last look, evLost
	// set when the kernel dropped some.
	closeEvents func() error
	evMu        sync.Mutex
	evs         []procEvent
	evLost      bool
	// matches are the candidates of a Matcher by PID (Run's goroutine
	// only): the processes it wanted at the last full look, and those the
	// events named since (pollEvents). A fork of any other runs an
	// executable not wanted, and is not looked at.
	matches map[int]bool
}

// New returns a Watcher for opt; Run starts it.
func New(opt Options) (*Watcher, error) {
	if !supported {
		return nil, ErrUnsupported
	}
	if opt.Poll <= 0 {
		opt.Poll = DefaultPoll
	}
	if opt.MaxProcs <= 0 {
		opt.MaxProcs = DefaultMaxProcs
	}
	w := &Watcher{opt: opt, dir: opt.Dir, recs: map[Proc]*Record{}, kids: map[*Record]*child{}, refused: map[Proc]bool{}, failures: map[string]int{}}
	if w.dir == "" {
		d, err := os.MkdirTemp("", "patchprof-watch-*")
		if err != nil {
			return nil, fmt.Errorf("watch: a directory for the profiles: %w", err)
		}
		w.dir, w.temp = d, true
	} else if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	return w, nil
}

// Run watches until ctx is done, then lets go of every process (each
// child detaches and saves), waits for the children and saves the final
// aggregate. A value on snap saves the aggregate of the moment.
func (w *Watcher) Run(ctx context.Context, snap <-chan struct{}) error {
	if w.temp {
		defer os.RemoveAll(w.dir)
	}
	defer func() {
		if w.closeEvents != nil {
			w.closeEvents()
		}
	}()
	wake, every := w.events()
	poll := time.NewTicker(every)
	defer poll.Stop()
	var tick <-chan time.Time
	if w.opt.Interval > 0 {
		t := time.NewTicker(w.opt.Interval)
		defer t.Stop()
		tick = t.C
	}
	var delay <-chan time.Time // a wake within Poll of the last look
	var last time.Time
	full := true
	var pending []procEvent
	for {
		var err error
		if full {
			err = w.poll()
			last, full, pending = time.Now(), false, nil
		} else if len(pending) > 0 {
			err = w.pollEvents(pending)
			pending = nil
		}
		if err != nil {
			w.stopAll()
			return err
		}
		select {
		case <-poll.C:
			full = true
		case <-wake:
			evs, all := w.takeEvents()
			if _, ok := w.opt.Select.(Matcher); ok && !all {
				pending = append(pending, evs...)
			} else if d := w.opt.Poll - time.Since(last); d <= 0 {
				full = true
			} else if delay == nil {
				// At most one full look per Poll, however busy the host.
				delay = time.After(d)
			}
		case <-delay:
			delay, full = nil, true
		case <-tick:
			w.save(false)
		case <-snap:
			w.save(false)
		case <-ctx.Done():
			w.stopAll()
			w.save(true)
			return nil
		}
	}
}

// events joins the kernel's process events connector, unless NoEvents:
// the watch then looks when a process is made or execs on the host (at
// the processes named, for a Matcher), and every EventsFallback, instead
// of every Poll. It returns the wake-ups (nil when polling) and how often
// to look at everything regardless.
func (w *Watcher) events() (wake <-chan struct{}, every time.Duration) {
	how := fmt.Sprintf("at most %d processes at once", w.opt.MaxProcs)
	if w.opt.NoEvents {
		w.logf("watching %s: looking every %v (--no-events), %s", w.opt.Select, w.opt.Poll, how)
		return nil, w.opt.Poll
	}
	// A cgroup's processes are made by forks (or moved in, which no event
	// says); an exec leaves a process in its cgroup.
	_, cgroup := w.opt.Select.(*Cgroup)
	ev, err := openProcEvents(!cgroup)
	if err != nil {
		w.logf("watching %s: looking every %v (no process events: %v), %s", w.opt.Select, w.opt.Poll, err, how)
		return nil, w.opt.Poll
	}
	ch := make(chan struct{}, 1)
	w.closeEvents = ev.Close
	go func() {
		for {
			evs, lost, ok := ev.Wait()
			if !ok {
				return
			}
			w.evMu.Lock()
			w.evs = append(w.evs, evs...)
			w.evLost = w.evLost || lost
			w.evMu.Unlock()
			select {
			case ch <- struct{}{}:
			default: // one pending wake-up is enough
			}
		}
	}()
	every = max(EventsFallback, w.opt.Poll)
	w.logf("watching %s: looking at each process made or exec'ed (process events), and every %v, %s", w.opt.Select, every, how)
	return ch, every
}

// takeEvents returns the processes the events named since the last
// call, in order, and whether events were lost (everything must be
// looked at).
func (w *Watcher) takeEvents() (evs []procEvent, lost bool) {
	w.evMu.Lock()
	defer w.evMu.Unlock()
	evs, lost = w.evs, w.evLost
	w.evs, w.evLost = nil, false
	return evs, lost
}

// poll finds the new processes and attaches to each, up to MaxProcs.
func (w *Watcher) poll() error {
	procs, err := w.opt.Select.Select()
	if err != nil {
		return err
	}
	w.matches = make(map[int]bool, len(procs))
	for _, p := range procs {
		w.matches[p.PID] = true
	}
	return w.attachAll(procs)
}

// pollEvents attaches to those of the processes evs name that the
// Selector, a Matcher, wants, taking the events in the kernel's order.
// A fork runs its parent's executable until it execs, so the fork of a
// process that is no candidate is passed over without a look (on a host,
// most forks are of long-running processes: shells, servers, make). The
// candidates (matches) are the processes wanted at the last full look,
// every process exec'ed since, and every fork of a candidate since,
// whatever Match says of it now: Match sees a process as it is when the
// event is read, and by then it may have exec'ed again or exited, while
// its forks, made before, still run what it ran (a daemon's double
// fork). The fork of a candidate that is wanted is attached to unless its
// parent's patchprof follows it already (attachAll).
//
// Why no wanted process is passed over: a process that ran the wanted
// file when it forked ran it since the last full look saw it (and is a
// candidate), or since an exec after that look began (a candidate: the
// event is taken after the look), or since its own fork from a process
// that ran the file then, a candidate by the same argument, the events
// coming in order. One whose file is renamed to Path while it runs is
// found by the next full look, as before.
func (w *Watcher) pollEvents(evs []procEvent) error {
	m := w.opt.Select.(Matcher)
	var procs []Proc
	for _, ev := range evs {
		if ev.Fork && !w.matches[ev.Parent] {
			continue
		}
		w.matches[ev.PID] = true
		if p, ok := m.Match(ev.PID); ok {
			procs = append(procs, p)
		}
	}
	return w.attachAll(procs)
}

// attachAll attaches to each of procs not watched yet, up to MaxProcs.
func (w *Watcher) attachAll(procs []Proc) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	active := len(w.kids)
	for _, p := range procs {
		if r := w.recs[p]; r != nil && !execedSince(r) {
			continue
		}
		if t := tracer(p.PID); t != 0 && w.ours(t) {
			// A fork of a watched process: its patchprof follows it, and
			// counts it in that process's profile.
			continue
		}
		if active >= w.opt.MaxProcs {
			if !w.refused[p] {
				w.refused[p] = true
				w.failures[ReasonMaxProcs]++
				w.logf("--max-procs %d reached: PID %d not watched (yet)", w.opt.MaxProcs, p.PID)
			}
			continue
		}
		r := &Record{Proc: p, Found: time.Now(), exe: exeOf(p.PID)}
		c, err := w.start(r)
		if err != nil {
			return err
		}
		w.recs[p] = r
		w.order = append(w.order, r)
		w.kids[r] = c
		active++
	}
	return nil
}

// execedSince reports whether r's process, whose patchprof ended without
// attaching, now runs another file than when it was found: it exec'd as
// its patchprof attached (which then refuses: monitor.ExecedError), or
// after, and is a program to watch anew. A process keeps its PID and
// start time across an exec, so only its file tells.
//
// Preconditions: w.mu held.
func execedSince(r *Record) bool {
	if r.Ended.IsZero() || !r.Attached.IsZero() || r.exe == (fileID{}) {
		return false
	}
	now := exeOf(r.Proc.PID)
	return now != (fileID{}) && now != r.exe
}

// ours reports whether pid is one of the children. Preconditions: w.mu held.
func (w *Watcher) ours(pid int) bool {
	for _, c := range w.kids {
		if c.cmd.Process != nil && c.cmd.Process.Pid == pid {
			return true
		}
	}
	return false
}

// stopAll asks every child to detach and waits for all of them.
func (w *Watcher) stopAll() {
	w.mu.Lock()
	for _, c := range w.kids {
		c.terminate()
	}
	w.mu.Unlock()
	w.wg.Wait()
}

// snapshot asks every attached child for its profile of the moment and
// waits until each has saved it, or has ended.
func (w *Watcher) snapshot() {
	w.mu.Lock()
	var asked []*child
	for r, c := range w.kids {
		if !r.Attached.IsZero() {
			if c.askSnapshot() {
				asked = append(asked, c)
			}
		}
	}
	w.mu.Unlock()
	for _, c := range asked {
		c.waitSnapshot()
	}
}

// save hands the aggregate to Options.Save: of the moment (every child
// asked) on a request and at each Interval, and final at the end.
func (w *Watcher) save(final bool) {
	var recs []*Record
	if final {
		recs = w.collect()
	} else {
		recs = w.Current()
	}
	builds, err := Aggregate(recs)
	if err != nil {
		w.logf("%v", err)
		return
	}
	if w.opt.Save != nil {
		w.opt.Save(builds, final)
	}
}

// Current asks every attached child for its counts of the moment, waits
// for them, and returns a copy of every record (its Profile shared: the
// caller clones it to change it), in the order found.
func (w *Watcher) Current() []*Record {
	w.snapMu.Lock()
	defer w.snapMu.Unlock()
	w.snapshot()
	return w.collect()
}

// collect loads each running process's latest saved profile and returns
// a copy of every record.
func (w *Watcher) collect() []*Record {
	w.mu.Lock()
	for r, c := range w.kids {
		if p := c.load(); p != nil {
			r.Profile = p
		}
	}
	recs := make([]*Record, 0, len(w.order))
	for _, r := range w.order {
		cp := *r
		recs = append(recs, &cp)
	}
	w.mu.Unlock()
	sortRecords(recs)
	return recs
}

// Counters are a watch's totals since it began.
type Counters struct {
	Watched  int            // processes attached now
	Attaches int            // processes attached to
	Failures map[string]int // refusals by Reason
}

// Counters returns the watch's totals of the moment.
func (w *Watcher) Counters() Counters {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := Counters{Attaches: w.attaches, Failures: map[string]int{}}
	for r := range w.kids {
		if !r.Attached.IsZero() {
			c.Watched++
		}
	}
	for k, v := range w.failures {
		c.Failures[k] = v
	}
	return c
}

// logf writes one "patchprof: watch: " line to Options.Log.
func (w *Watcher) logf(format string, args ...any) {
	if w.opt.Log == nil {
		return
	}
	w.logMu.Lock()
	defer w.logMu.Unlock()
	fmt.Fprintf(w.opt.Log, "patchprof: watch: "+format+"\n", args...)
}
