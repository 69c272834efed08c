package symtab

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
)

// Note types of the build ID notes. [ELF gABI, "Note Section"]; the GNU
// one is in binutils' include/elf/common.h, the Go one in
// cmd/internal/objabi (ELF_NOTE_GOBUILDID_TAG).
const (
	ntGNUBuildID = 3
	ntGoBuildID  = 4
)

// buildID returns the hex NT_GNU_BUILD_ID of ef, else the Go build ID
// string, else "".
func buildID(ef *elf.File) string {
	var gnuID, goID string
	for _, s := range ef.Sections {
		if s.Type != elf.SHT_NOTE || gnuID != "" {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		forEachNote(data, ef.ByteOrder, func(name string, typ uint32, desc []byte) bool {
			switch {
			case name == "GNU" && typ == ntGNUBuildID && len(desc) > 0:
				gnuID = hex.EncodeToString(desc)
				return false
			case name == "Go" && typ == ntGoBuildID && goID == "":
				goID = string(bytes.TrimRight(desc, "\x00"))
			}
			return true
		})
	}
	if gnuID != "" {
		return gnuID
	}
	return goID
}

// forEachNote calls fn for every well-formed note in data, stopping when fn
// returns false or at the first malformed note. Each note is namesz, descsz
// and type (4 bytes each), then name and desc, each padded to 4 bytes.
func forEachNote(data []byte, order binary.ByteOrder, fn func(name string, typ uint32, desc []byte) bool) {
	for len(data) >= 12 {
		namesz := uint64(order.Uint32(data[0:]))
		descsz := uint64(order.Uint32(data[4:]))
		typ := order.Uint32(data[8:])
		data = data[12:]
		nameEnd := (namesz + 3) &^ 3
		if nameEnd > uint64(len(data)) {
			return
		}
		name := string(bytes.TrimRight(data[:namesz], "\x00"))
		data = data[nameEnd:]
		descEnd := (descsz + 3) &^ 3
		if descEnd > uint64(len(data)) {
			if descsz > uint64(len(data)) {
				return
			}
			descEnd = uint64(len(data))
		}
		desc := data[:descsz]
		data = data[descEnd:]
		if !fn(name, typ, desc) {
			return
		}
	}
}
