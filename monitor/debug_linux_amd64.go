//go:build linux && amd64

package monitor

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// debug records every event (PATCHPROF_DEBUG=1), for developers: the last
// 400 lines are printed to stderr on SIGUSR2 and at the end.
var debug = os.Getenv("PATCHPROF_DEBUG") != ""

var (
	ring    [400]string
	ringPos int
	ringMu  sync.Mutex
)

// debugStart is when the monitor started: each debug line carries the
// microseconds since, to show where a run's time goes.
var debugStart = time.Now()

func dbg(format string, args ...any) {
	ringMu.Lock()
	ring[ringPos%len(ring)] = fmt.Sprintf("%8d ", time.Since(debugStart).Microseconds()) + fmt.Sprintf(format, args...)
	ringPos++
	ringMu.Unlock()
}

func dumpRing(m *mon) {
	ringMu.Lock()
	defer ringMu.Unlock()
	for k := max(0, ringPos-len(ring)); k < ringPos; k++ {
		fmt.Fprint(os.Stderr, "[pp] "+ring[k%len(ring)])
	}
	for _, t := range m.threads {
		fmt.Fprintf(os.Stderr, "[pp] thread %d state=%d fresh=%v held=%d vfork=%v group=%v\n", t.tid, t.state, t.fresh, t.held, t.vforkWait, t.groupStop)
	}
	fmt.Fprintf(os.Stderr, "[pp] queue=%v orphans=%v\n", m.queue, m.orphans)
}
