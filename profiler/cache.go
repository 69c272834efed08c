package profiler

import (
	"fmt"
	"github.com/patchprof/patchprof/breakpoint"
	"sync"

	"github.com/patchprof/patchprof/anacache"
	"github.com/patchprof/patchprof/lineinfo"
	"github.com/patchprof/patchprof/profile"
	"github.com/patchprof/patchprof/symtab"
)

// The analysis cache's part in a run: each module's line table and
// subprograms read from the cache (package anacache) when an earlier run
// stored them for the same file and the same build of patchprof, computed
// and stored otherwise. What is served from the cache is what the readers
// would return: the plan, and so the counts, are the same either way.

// A cacheUse is a run's analysis cache and the notes on what it served;
// its methods may be called from Open and from the monitor's thread,
// and on a nil cacheUse (no cache, no notes).
type cacheUse struct {
	c *anacache.Cache // nil: every analysis is computed

	mu    sync.Mutex
	notes []string
	// stores are the entries being encoded and written, in the
	// background of the planning that follows.
	stores sync.WaitGroup
}

// wait waits for the entries being stored.
func (u *cacheUse) wait() {
	if u != nil {
		u.stores.Wait()
	}
}

// openCache opens the cache of cfg, none without Config.Cache. A cache
// that cannot be opened is said in a note (anacache's errors begin with
// profile.CacheNotePrefix) and the run goes on without it.
func openCache(cfg Config) *cacheUse {
	if !cfg.Cache {
		return &cacheUse{}
	}
	c, err := anacache.Open(anacache.Options{Dir: cfg.CacheDir})
	if err != nil {
		return &cacheUse{notes: []string{fmt.Sprintf("%v: running without it", err)}}
	}
	return &cacheUse{c: c}
}

func (u *cacheUse) note(format string, args ...any) {
	u.mu.Lock()
	u.notes = append(u.notes, fmt.Sprintf(format, args...))
	u.mu.Unlock()
}

// Notes returns the notes so far, once the entries being stored are
// written: one per analysis served or stored, and the entries found
// corrupt.
func (u *cacheUse) Notes() []string {
	if u == nil {
		return nil
	}
	u.wait()
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.notes...)
}

// key returns the cache key of one analysis of sym's file, ok false when
// the file cannot be identified (then nothing is cached).
func (u *cacheUse) key(kind string, sym *symtab.File, options string) (anacache.Key, bool) {
	if u == nil || u.c == nil {
		return anacache.Key{}, false
	}
	id, err := anacache.FileID(sym.Path, sym.BuildID)
	if err != nil {
		return anacache.Key{}, false
	}
	return anacache.Key{Kind: kind, Self: anacache.SelfID(), File: id, Options: options}, true
}

// cached returns one analysis of sym's file (what is the analysis's name
// in the notes): decoded from the cache, else computed with compute and
// stored with encode. A corrupt entry or one that does not decode is a
// miss, said in a note; an error of compute is returned as is, and
// nothing is stored.
func cached[T any](u *cacheUse, what, kind, options string, sym *symtab.File, compute func() (T, error), encode func(T) ([]byte, error), decode func([]byte) (T, error)) (T, error) {
	k, ok := u.key(kind, sym, options)
	if !ok {
		return compute()
	}
	b, hit, err := u.c.Get(k)
	if err != nil {
		u.note("%v", err)
	}
	if hit {
		v, err := decode(b)
		if err == nil {
			u.note(profile.CacheNotePrefix+"%s of %s: hit", what, sym.Path)
			return v, nil
		}
		u.note(profile.CacheNotePrefix+"%s of %s: the entry does not decode (%v): recomputed", what, sym.Path, err)
	}
	v, err := compute()
	if err != nil {
		return v, err
	}
	// Encoding and writing take tens of milliseconds on a large program:
	// on another CPU, beside the planning, which only reads v.
	u.stores.Add(1)
	go func() {
		defer u.stores.Done()
		b, err := encode(v)
		if err == nil {
			err = u.c.Put(k, b)
		}
		if err != nil {
			u.note(profile.CacheNotePrefix+"%s of %s: miss, not stored: %v", what, sym.Path, err)
		} else {
			u.note(profile.CacheNotePrefix+"%s of %s: miss, stored", what, sym.Path)
		}
	}()
	return v, nil
}

// readLines is lineinfo.ReadWith(sym.Path, s.readOptions()) through the
// cache.
func (s *selection) readLines(sym *symtab.File) (*lineinfo.Table, error) {
	opt := s.readOptions()
	return cached(s.cache, "line table", "lines", fmt.Sprintf("defer-go-std=%v", opt.DeferGoStd), sym,
		func() (*lineinfo.Table, error) { return lineinfo.ReadWith(sym.Path, opt) },
		(*lineinfo.Table).MarshalBinary, lineinfo.UnmarshalTable)
}

// branchTargets gives sym its branch targets (symtab.Targets, which
// decodes every instruction of the file) from the cache, for the jump
// plan. On a miss the plan computes them as before, beside the line
// model, and the returned function, given the plan, stores them from
// another goroutine once the plan is done, if it computed them; nil on a
// hit or without a cache.
func (s *selection) branchTargets(sym *symtab.File) func(*breakpoint.Plan) {
	u := s.cache
	k, ok := u.key("targets", sym, "")
	if !ok {
		return nil
	}
	const what = "branch targets"
	b, hit, err := u.c.Get(k)
	if err != nil {
		u.note("%v", err)
	}
	if hit {
		t, err := symtab.UnmarshalTargets(b)
		if err == nil {
			sym.SetTargets(t)
			u.note(profile.CacheNotePrefix+"%s of %s: hit", what, sym.Path)
			return nil
		}
		u.note(profile.CacheNotePrefix+"%s of %s: the entry does not decode (%v): recomputed", what, sym.Path, err)
	}
	return func(plan *breakpoint.Plan) {
		u.stores.Add(1)
		go func() {
			defer u.stores.Done()
			plan.Wait()
			t, ok := sym.ComputedTargets()
			if !ok {
				return // the plan needed none
			}
			b, _ := t.MarshalBinary()
			if err := u.c.Put(k, b); err != nil {
				u.note(profile.CacheNotePrefix+"%s of %s: miss, not stored: %v", what, sym.Path, err)
			} else {
				u.note(profile.CacheNotePrefix+"%s of %s: miss, stored", what, sym.Path)
			}
		}()
	}
}

// subprograms is lineinfo.Subprograms(sym.Path) through the cache; nil
// when .debug_info cannot be read (the plan goes on without it).
func (s *selection) subprograms(sym *symtab.File) []lineinfo.Subprogram {
	subs, _ := cached(s.cache, "subprograms", "subprograms", "", sym,
		func() ([]lineinfo.Subprogram, error) { return lineinfo.Subprograms(sym.Path) },
		lineinfo.MarshalSubprograms, lineinfo.UnmarshalSubprograms)
	return subs
}
