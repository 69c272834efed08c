package main

import (
	"fmt"
	"strconv"
	"strings"
)

// A Mapping is one line of /proc/PID/maps: the range of addresses, the
// permissions, the offset in the file and the file's path ("" for an
// anonymous mapping, "[vdso]" and the like for the kernel's).
type Mapping struct {
	Lo, Hi, Offset uint64
	Perms, Path    string
}

// parseMapping reads one line of /proc/PID/maps (proc(5)):
// "lo-hi perms offset dev inode path".
func parseMapping(line string) (Mapping, error) {
	f := strings.Fields(line)
	if len(f) < 5 {
		return Mapping{}, fmt.Errorf("maps line %q: want at least 5 fields", line)
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	var m Mapping
	var errs [3]error
	m.Lo, errs[0] = strconv.ParseUint(lo, 16, 64)
	m.Hi, errs[1] = strconv.ParseUint(hi, 16, 64)
	m.Offset, errs[2] = strconv.ParseUint(f[2], 16, 64)
	if !ok || errs[0] != nil || errs[1] != nil || errs[2] != nil || m.Hi < m.Lo {
		return Mapping{}, fmt.Errorf("maps line %q: bad range or offset", line)
	}
	m.Perms = f[1]
	if len(f) > 5 {
		// A path may hold spaces.
		m.Path = strings.Join(f[5:], " ")
	}
	return m, nil
}

// codeMappings returns the executable mappings of a /proc/PID/maps text,
// as their lines and parsed: what patchprof patches and must leave as it
// found them.
func codeMappings(maps string) (lines []string, ms []Mapping, err error) {
	for _, l := range strings.Split(maps, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		m, err := parseMapping(l)
		if err != nil {
			return nil, nil, err
		}
		if strings.Contains(m.Perms, "x") {
			lines, ms = append(lines, l), append(ms, m)
		}
	}
	return lines, ms, nil
}
