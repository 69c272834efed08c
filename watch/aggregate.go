package watch

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/patchprof/patchprof/profile"
)

// A Record is what a watch knows of one process it found.
type Record struct {
	Proc Proc
	// Found is when the watch found the process; Attached when its
	// patchprof said it attached (zero: not, or not yet); Ended when the
	// patchprof ended (zero: still running).
	Found, Attached, Ended time.Time
	// Refused says why the process is not watched ("" when it is or was):
	// --max-procs reached, or the attach failed (the child's message).
	Refused string
	// Profile is the process's latest saved profile (nil before its
	// first): interim while its patchprof runs, final after.
	Profile *profile.Profile
	// exe is the file the process ran when found (exeOf), zero if unknown.
	exe fileID
}

// A Build is the sum of the profiles of every process of one executable
// build: one build ID (or, without one, one executable path).
type Build struct {
	Key     string // the build ID, or the executable's path
	Profile *profile.Profile
	PIDs    []int // the processes summed, in the order found
}

// Aggregate sums the profiles of recs by build, in the order each build
// was first found. Each build's profile says, one note per process, when
// it was attached (its counts start there) and how it ended; its exit is
// running while any of its processes is watched, else detached.
func Aggregate(recs []*Record) ([]Build, error) {
	var keys []string
	groups := map[string][]*Record{}
	for _, r := range recs {
		if r.Profile == nil {
			continue
		}
		k := cmp.Or(r.Profile.BuildID, r.Profile.Executable)
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	out := make([]Build, 0, len(keys))
	for _, k := range keys {
		rs := groups[k]
		ps := make([]*profile.Profile, len(rs))
		b := Build{Key: k}
		running, changed := false, false
		for i, r := range rs {
			ps[i] = r.Profile
			b.PIDs = append(b.PIDs, r.Proc.PID)
			running = running || r.Ended.IsZero()
			changed = changed || r.Profile.Exit.Changed
		}
		p, err := profile.Merge(false, ps...)
		if err != nil {
			return nil, fmt.Errorf("build %s: %w", k, err)
		}
		p.Args = nil
		p.Exit = profile.Exit{Running: running, Detached: !running, Changed: changed}
		for _, r := range rs {
			p.Notes = append(p.Notes, r.Note())
		}
		b.Profile = p
		out = append(out, b)
	}
	return out, nil
}

// Note says in one sentence when r's process was watched and how its
// watch ended, for the aggregate's notes.
func (r *Record) Note() string {
	s := fmt.Sprintf("PID %d: counted from its attach at %s", r.Proc.PID, stamp(r.Attached))
	switch {
	case r.Ended.IsZero():
		return s + ", still watched"
	case r.Profile != nil && r.Profile.Exit.Detached:
		return s + fmt.Sprintf(" to the detach at %s", stamp(r.Ended))
	case r.Profile != nil && r.Profile.Exit.Signal != "":
		return s + fmt.Sprintf(" to its death by %s at %s", r.Profile.Exit.Signal, stamp(r.Ended))
	case r.Profile != nil && r.Profile.Exit.Code != nil:
		return s + fmt.Sprintf(" to its exit %d at %s", *r.Profile.Exit.Code, stamp(r.Ended))
	}
	return s + fmt.Sprintf(" to %s", stamp(r.Ended))
}

// stamp is t in UTC to the millisecond, as the notes and /processes say it.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "(unknown)"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// sortRecords orders recs by when they were found, then by PID.
func sortRecords(recs []*Record) {
	slices.SortStableFunc(recs, func(a, b *Record) int {
		return cmp.Or(a.Found.Compare(b.Found), cmp.Compare(a.Proc.PID, b.Proc.PID))
	})
}
