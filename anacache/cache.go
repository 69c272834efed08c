package anacache

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Version is the entry format's version: an entry of another version is
// a miss. Raise it when the header changes.
const Version = 1

// magic opens every entry.
const magic = "PPANACHE"

// entrySuffix ends the name of every entry.
const entrySuffix = ".entry"

// headerLen is the length of an entry's header: magic, version (4 bytes),
// the key's digest (32), the payload's length (8) and its CRC-32C (4).
const headerLen = len(magic) + 4 + 32 + 8 + 4

// DefaultMaxBytes bounds a cache whose Options say nothing: room for the
// analysis of a few dozen large programs.
const DefaultMaxBytes = 256 << 20

// castagnoli returns the CRC-32C table (the checksum of the payload),
// made at the first use: every run pays the package's init, not every run
// reads the cache.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// Options configure a Cache.
type Options struct {
	// Dir is the cache directory; "" is DefaultDir's.
	Dir string
	// MaxBytes bounds the entries' total size; 0 is DefaultMaxBytes.
	MaxBytes int64
}

// A Cache is a directory of entries. Its methods may be called from
// several goroutines, and several processes may share the directory.
type Cache struct {
	dir string
	max int64
}

// DefaultDir returns the cache directory of patchprof: $XDG_CACHE_HOME/
// patchprof, else ~/.cache/patchprof (os.UserCacheDir's choice on Linux).
func DefaultDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("analysis cache: no cache directory: %w", err)
	}
	return filepath.Join(base, "patchprof"), nil
}

// Open returns the cache in opt.Dir, creating the directory (mode 0700:
// the analysis names the user's source files) if needed.
func Open(opt Options) (*Cache, error) {
	dir := opt.Dir
	if dir == "" {
		d, err := DefaultDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("analysis cache: %w", err)
	}
	limit := opt.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	return &Cache{dir: dir, max: limit}, nil
}

// Dir returns the cache's directory.
func (c *Cache) Dir() string { return c.dir }

// A CorruptError says an entry could not be trusted: it was cut short,
// overwritten, or written by another format. The entry has been removed.
type CorruptError struct {
	Path string
	Msg  string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("analysis cache entry %s is corrupt (%s): removed, the analysis is recomputed", e.Path, e.Msg)
}

// A TooLargeError says an entry was not stored: it alone would exceed
// the cache's bound.
type TooLargeError struct {
	Size, Max int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("analysis cache: an entry of %d bytes exceeds the cache's bound of %d bytes: not stored", e.Size, e.Max)
}

// name returns the path of the entry of key.
func (c *Cache) name(sum [32]byte) string {
	return filepath.Join(c.dir, hex.EncodeToString(sum[:20])+entrySuffix)
}

// Get returns the payload stored under key. ok is false on a miss; err is
// non-nil (a *CorruptError, or the file system's error) when an entry was
// there but could not be read or trusted, which is also a miss. A hit
// refreshes the entry's modification time, so eviction removes the least
// recently used entries first.
func (c *Cache) Get(key Key) (payload []byte, ok bool, err error) {
	sum := key.sum()
	path := c.name(sum)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("analysis cache: %w", err)
	}
	payload, msg := check(data, sum)
	if msg != "" {
		// Another run may have replaced the entry since it was read:
		// removing a good one costs that run's next start, no more.
		os.Remove(path)
		return nil, false, &CorruptError{Path: path, Msg: msg}
	}
	now := time.Now()
	os.Chtimes(path, now, now)
	return payload, true, nil
}

// check returns the payload of an entry, or why it cannot be trusted.
func check(data []byte, sum [32]byte) ([]byte, string) {
	if len(data) < headerLen {
		return nil, fmt.Sprintf("%d bytes, shorter than its header", len(data))
	}
	h := data[:headerLen]
	if string(h[:len(magic)]) != magic {
		return nil, "not an entry of patchprof's analysis cache"
	}
	h = h[len(magic):]
	if v := binary.LittleEndian.Uint32(h); v != Version {
		return nil, fmt.Sprintf("format version %d, want %d", v, Version)
	}
	if !bytes.Equal(h[4:36], sum[:]) {
		return nil, "written for another key"
	}
	n := binary.LittleEndian.Uint64(h[36:])
	payload := data[headerLen:]
	if n != uint64(len(payload)) {
		return nil, fmt.Sprintf("payload of %d bytes, header says %d", len(payload), n)
	}
	if crc32.Checksum(payload, castagnoli()) != binary.LittleEndian.Uint32(h[44:]) {
		return nil, "checksum mismatch"
	}
	return payload, ""
}

// Put stores payload under key: written to a temporary file in the cache
// directory and renamed over the entry, so that readers and concurrent
// writers never see a partial entry. Then the oldest entries are removed
// while the directory is over its bound.
func (c *Cache) Put(key Key, payload []byte) error {
	sum := key.sum()
	if int64(headerLen+len(payload)) > c.max {
		return &TooLargeError{Size: int64(headerLen + len(payload)), Max: c.max}
	}
	f, err := os.CreateTemp(c.dir, tmpPrefix+"*")
	if err != nil {
		return fmt.Errorf("analysis cache: %w", err)
	}
	h := make([]byte, 0, headerLen)
	h = append(h, magic...)
	h = binary.LittleEndian.AppendUint32(h, Version)
	h = append(h, sum[:]...)
	h = binary.LittleEndian.AppendUint64(h, uint64(len(payload)))
	h = binary.LittleEndian.AppendUint32(h, crc32.Checksum(payload, castagnoli()))
	_, err = f.Write(h)
	if err == nil {
		_, err = f.Write(payload)
	}
	err = errors.Join(err, f.Close())
	if err == nil {
		err = os.Rename(f.Name(), c.name(sum))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("analysis cache: %w", err)
	}
	return c.evict(sum)
}
