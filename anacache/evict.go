package anacache

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// tmpPrefix names the temporary files Put writes before renaming them.
const tmpPrefix = ".tmp-"

// abandoned is the age past which a temporary file is taken for one a
// killed run left behind: a Put takes milliseconds.
const abandoned = time.Hour

// An entryInfo is one file of the cache directory, as eviction sees it.
type entryInfo struct {
	path  string
	size  int64
	mtime time.Time
}

// evict removes the oldest entries while the directory holds more than
// the bound, never the entry just written (keep), and the temporary files
// of killed runs. Entries another run removes meanwhile are skipped:
// eviction is best effort, and several runs may evict at once.
func (c *Cache) evict(keep [32]byte) error {
	des, err := os.ReadDir(c.dir)
	if err != nil {
		return err
	}
	kept := c.name(keep)
	var entries []entryInfo
	var total int64
	for _, de := range des {
		info, err := de.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		path := filepath.Join(c.dir, de.Name())
		if strings.HasPrefix(de.Name(), tmpPrefix) {
			if time.Since(info.ModTime()) > abandoned {
				os.Remove(path)
			}
			continue
		}
		if !strings.HasSuffix(de.Name(), entrySuffix) {
			continue
		}
		total += info.Size()
		if path != kept {
			entries = append(entries, entryInfo{path: path, size: info.Size(), mtime: info.ModTime()})
		}
	}
	slices.SortFunc(entries, func(a, b entryInfo) int { return a.mtime.Compare(b.mtime) })
	for _, e := range entries {
		if total <= c.max {
			break
		}
		if err := os.Remove(e.path); err == nil || os.IsNotExist(err) {
			total -= e.size
		}
	}
	return nil
}
