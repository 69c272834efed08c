package anacache

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

func testKey(kind string) Key {
	return Key{Kind: kind, Self: "test", File: "build-id 01 size 1", Options: "o"}
}

func open(t *testing.T, max int64) *Cache {
	t.Helper()
	c, err := Open(Options{Dir: filepath.Join(t.TempDir(), "cache"), MaxBytes: max})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRoundTrip(t *testing.T) {
	c := open(t, 0)
	k := testKey("lines")
	if _, ok, err := c.Get(k); ok || err != nil {
		t.Fatalf("empty cache: Get = ok %v, err %v; want a plain miss", ok, err)
	}
	want := []byte("the analysis")
	if err := c.Put(k, want); err != nil {
		t.Fatal(err)
	}
	got, ok, err := c.Get(k)
	if !ok || err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Get = %q, %v, %v; want %q, true, nil", got, ok, err, want)
	}
	// Every field of the key is part of it.
	for _, other := range []Key{
		{Kind: "subprograms", Self: k.Self, File: k.File, Options: k.Options},
		{Kind: k.Kind, Self: "another build", File: k.File, Options: k.Options},
		{Kind: k.Kind, Self: k.Self, File: "build-id 02 size 1", Options: k.Options},
		{Kind: k.Kind, Self: k.Self, File: k.File, Options: "p"},
		// Length prefixes: no two keys share an encoding.
		{Kind: k.Kind + "t", Self: k.Self[1:], File: k.File, Options: k.Options},
	} {
		if _, ok, _ := c.Get(other); ok {
			t.Errorf("Get(%+v) hit the entry of %+v", other, k)
		}
	}
}

// TestStale: a program rebuilt at the same path gets another FileID, with
// or without a build ID, so its old entry is never read.
func TestStale(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "prog")
	if err := os.WriteFile(prog, []byte("first build"), 0o755); err != nil {
		t.Fatal(err)
	}
	noID1, err := FileID(prog, "")
	if err != nil {
		t.Fatal(err)
	}
	withID1, _ := FileID(prog, "aaaa")
	// The rebuild: another size, and another mtime (set, not waited for).
	if err := os.WriteFile(prog, []byte("second build, longer"), 0o755); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(prog, later, later); err != nil {
		t.Fatal(err)
	}
	noID2, _ := FileID(prog, "")
	withID2, _ := FileID(prog, "bbbb")
	if noID1 == noID2 {
		t.Errorf("without a build ID, a rebuilt file keeps its FileID %q", noID1)
	}
	if withID1 == withID2 {
		t.Errorf("with build IDs, a rebuilt file keeps its FileID %q", withID1)
	}
	// The same size and build ID but another mtime (a copy, a touch):
	// the same contents, the same FileID.
	touched := later.Add(time.Minute)
	os.Chtimes(prog, touched, touched)
	if again, _ := FileID(prog, "bbbb"); again != withID2 {
		t.Errorf("a touched file with a build ID: FileID %q, want %q", again, withID2)
	}
	// A copy that kept the note but not the size (stripped).
	os.WriteFile(prog, []byte("stripped"), 0o755)
	if stripped, _ := FileID(prog, "bbbb"); stripped == withID2 {
		t.Errorf("a stripped copy with the same build ID keeps FileID %q", stripped)
	}
	c := open(t, 0)
	k1 := Key{Kind: "lines", Self: "test", File: noID1}
	c.Put(k1, []byte("old analysis"))
	if _, ok, _ := c.Get(Key{Kind: "lines", Self: "test", File: noID2}); ok {
		t.Error("the rebuilt program read the old program's entry")
	}
	if _, err := FileID(filepath.Join(dir, "missing"), ""); err == nil {
		t.Error("FileID of a missing file: no error")
	}
}

// TestCorrupt: an entry cut short, overwritten with garbage, flipped in
// its payload or written by another version is a miss with a
// *CorruptError, and is removed.
func TestCorrupt(t *testing.T) {
	payload := bytes.Repeat([]byte("analysis "), 100)
	cases := []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"empty", func(b []byte) []byte { return nil }},
		{"truncated header", func(b []byte) []byte { return b[:headerLen-1] }},
		{"truncated payload", func(b []byte) []byte { return b[:len(b)-1] }},
		{"garbage", func(b []byte) []byte { return bytes.Repeat([]byte{0xa5}, len(b)) }},
		{"flipped payload byte", func(b []byte) []byte { b[headerLen+17] ^= 1; return b }},
		{"flipped checksum", func(b []byte) []byte { b[headerLen-1] ^= 0x80; return b }},
		{"other version", func(b []byte) []byte { b[len(magic)]++; return b }},
		{"other key", func(b []byte) []byte { b[len(magic)+4] ^= 1; return b }},
		{"longer", func(b []byte) []byte { return append(b, 0) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := open(t, 0)
			k := testKey("lines")
			if err := c.Put(k, payload); err != nil {
				t.Fatal(err)
			}
			path := c.name(k.sum())
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tc.damage(b), 0o600); err != nil {
				t.Fatal(err)
			}
			got, ok, err := c.Get(k)
			var ce *CorruptError
			if ok || got != nil || !errors.As(err, &ce) {
				t.Fatalf("Get = %d bytes, ok %v, err %v; want a miss with a *CorruptError", len(got), ok, err)
			}
			if msg := err.Error(); bytes.ContainsRune([]byte(msg), '\n') {
				t.Errorf("the note is not one line: %q", msg)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("the corrupt entry is still there (%v)", err)
			}
			// The next Put and Get work again.
			c.Put(k, payload)
			if got, ok, err := c.Get(k); !ok || err != nil || !bytes.Equal(got, payload) {
				t.Errorf("after the corrupt entry: Get = %d bytes, %v, %v", len(got), ok, err)
			}
		})
	}
}

// TestConcurrent: writers of one key (two runs on one binary at once, as
// separate Caches on one directory) and readers between them: every read
// is a miss or the whole payload, never a corrupt entry, and the entry is
// whole at the end.
func TestConcurrent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	k := testKey("lines")
	payload := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < 4; w++ {
		c, err := Open(Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				if err := c.Put(k, payload); err != nil {
					errs <- err
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				got, ok, err := c.Get(k)
				if err != nil {
					errs <- fmt.Errorf("a reader saw: %w", err)
				} else if ok && !bytes.Equal(got, payload) {
					errs <- fmt.Errorf("a reader got %d bytes, not the payload", len(got))
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	c, _ := Open(Options{Dir: dir})
	if got, ok, err := c.Get(k); !ok || err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("after the writers: Get = %d bytes, %v, %v", len(got), ok, err)
	}
	des, _ := os.ReadDir(dir)
	if len(des) != 1 {
		t.Errorf("the directory holds %d files, want the one entry", len(des))
	}
}

// TestBound: the directory stays under its bound, the least recently
// used entries go first, the entry just written stays, and an entry
// larger than the bound is not stored.
func TestBound(t *testing.T) {
	const size = 1000
	c := open(t, int64(3*(size+headerLen)))
	payload := bytes.Repeat([]byte{'x'}, size)
	key := func(i int) Key { return Key{Kind: "lines", File: fmt.Sprint(i)} }
	base := time.Now().Add(-time.Hour)
	for i := 0; i < 3; i++ {
		if err := c.Put(key(i), payload); err != nil {
			t.Fatal(err)
		}
		// Distinct ages, oldest first, without waiting.
		at := base.Add(time.Duration(i) * time.Minute)
		os.Chtimes(c.name(key(i).sum()), at, at)
	}
	// A hit makes entry 0 the most recently used.
	if _, ok, _ := c.Get(key(0)); !ok {
		t.Fatal("entry 0 missing before the bound was reached")
	}
	if err := c.Put(key(3), payload); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false, true, true} {
		if _, ok, _ := c.Get(key(i)); ok != want {
			t.Errorf("entry %d present %v, want %v", i, ok, want)
		}
	}
	if n := dirSize(t, c.Dir()); n > c.max {
		t.Errorf("the directory holds %d bytes, over the bound of %d", n, c.max)
	}
	var tl *TooLargeError
	if err := c.Put(key(9), bytes.Repeat([]byte{'y'}, 4*size)); !errors.As(err, &tl) {
		t.Errorf("Put of an entry over the bound: %v, want a *TooLargeError", err)
	}
	if _, ok, _ := c.Get(key(9)); ok {
		t.Error("an entry over the bound was stored")
	}
	// A temporary file a killed run left behind is removed by the next Put.
	stale := filepath.Join(c.Dir(), tmpPrefix+"killed")
	os.WriteFile(stale, payload, 0o600)
	old := time.Now().Add(-2 * abandoned)
	os.Chtimes(stale, old, old)
	c.Put(key(4), payload)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("an abandoned temporary file survived a Put (%v)", err)
	}
}

func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, de := range des {
		info, err := de.Info()
		if err == nil {
			n += info.Size()
		}
	}
	return n
}

func TestSelfID(t *testing.T) {
	if id := SelfID(); id == "" || id == "unknown" || id != SelfID() {
		t.Errorf("SelfID = %q, want a stable identity of the test binary", id)
	}
}

func TestDefaultDir(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("os.UserCacheDir reads XDG_CACHE_HOME on Linux; elsewhere the system's own place")
	}
	t.Setenv("XDG_CACHE_HOME", "/some/where")
	d, err := DefaultDir()
	if err != nil || d != "/some/where/patchprof" {
		t.Errorf("DefaultDir = %q, %v; want /some/where/patchprof", d, err)
	}
}
