//go:build linux && amd64

package monitor

import (
	"sync"
	"time"
)

// A progress display (Options.Hits) shows the hits so far while the target
// runs; under the in-process engine most hits never stop the target, so
// they are read from the counter memories themselves. liveCounts is the
// set of counter memories another goroutine may sum: the tracer adds and
// removes them, and the mappings' counter ranges, under its lock, and a
// memory is unmapped only after it has left the set.
type liveCounts struct {
	mu   sync.Mutex
	mems map[*counterMem][]counterRange
	dead uint64 // the final totals of the memories that left
}

// A counterRange is one mapping's counters in every slab.
type counterRange struct{ off, n uint64 }

// add registers a counter memory.
func (l *liveCounts) add(c *counterMem) {
	l.mu.Lock()
	if l.mems == nil {
		l.mems = map[*counterMem][]counterRange{}
	}
	l.mems[c] = nil
	l.mu.Unlock()
}

// addRange registers n counters at off in c's slabs.
func (l *liveCounts) addRange(c *counterMem, off uint64, n int) {
	l.mu.Lock()
	if r, ok := l.mems[c]; ok {
		l.mems[c] = append(r, counterRange{off, uint64(n)})
	}
	l.mu.Unlock()
}

// setSlabs records how many of c's slabs are in use.
func (l *liveCounts) setSlabs(c *counterMem, ever int) {
	l.mu.Lock()
	c.ever = ever
	l.mu.Unlock()
}

// remove takes c out of the set, keeping its total, before it is unmapped.
func (l *liveCounts) remove(c *counterMem) {
	l.mu.Lock()
	if r, ok := l.mems[c]; ok {
		l.dead += sumCounts(c, r)
		delete(l.mems, c)
	}
	l.mu.Unlock()
}

// total returns every in-process count so far.
func (l *liveCounts) total() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	sum := l.dead
	for c, r := range l.mems {
		sum += sumCounts(c, r)
	}
	return sum
}

// sumCounts adds up the counters of ranges r in every used slab of c.
func sumCounts(c *counterMem, r []counterRange) uint64 {
	var sum uint64
	for k := 0; k < c.ever; k++ {
		base := uint64(k) * c.slabSize
		for _, x := range r {
			for i := uint64(0); i < x.n; i++ {
				sum += loadCounter(c.mem, base+x.off+8*i)
			}
		}
	}
	return sum
}

// reportLive adds the in-process counts to Options.Hits every quarter of a
// second until done is closed, and once more then.
func (m *mon) reportLive(done <-chan struct{}) {
	var last uint64
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-done:
			m.o.Hits.Add(m.live.total() - last)
			return
		}
		t := m.live.total()
		m.o.Hits.Add(t - last)
		last = t
	}
}
