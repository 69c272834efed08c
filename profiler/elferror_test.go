package profiler

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/patchprof/patchprof/lineinfo"
	"github.com/patchprof/patchprof/symtab"
)

// TestDescribeELFError: the message for a file symtab or lineinfo cannot
// read names the file once (issue 12: "X: X: EOF").
func TestDescribeELFError(t *testing.T) {
	dir := t.TempDir()
	// A valid x86-64 ELF header that says there are section headers past
	// the end of the file: debug/elf fails with EOF.
	hdr := make([]byte, 64)
	copy(hdr, elf.ELFMAG)
	hdr[elf.EI_CLASS], hdr[elf.EI_DATA], hdr[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le := binary.LittleEndian
	le.PutUint16(hdr[16:], uint16(elf.ET_EXEC))
	le.PutUint16(hdr[18:], uint16(elf.EM_X86_64))
	le.PutUint32(hdr[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(hdr[40:], 4096) // e_shoff
	le.PutUint16(hdr[52:], 64)   // e_ehsize
	le.PutUint16(hdr[58:], 64)   // e_shentsize
	le.PutUint16(hdr[60:], 3)    // e_shnum
	truncated := filepath.Join(dir, "truncated")
	arm := filepath.Join(dir, "arm64")
	armHdr := append([]byte(nil), hdr...)
	le.PutUint16(armHdr[18:], uint16(elf.EM_AARCH64))
	for path, data := range map[string][]byte{truncated: hdr, arm: armHdr} {
		if err := os.WriteFile(path, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{truncated, "./prog: corrupt ELF file (EOF): is the file complete? Rebuild it or copy it again"},
		{arm, "./prog: not an x86-64 ELF executable (found 64-bit EM_AARCH64): patchprof profiles x86-64 programs only"},
	} {
		_, err := symtab.Open(tc.path)
		if err == nil {
			t.Fatalf("symtab.Open(%s) succeeded", tc.path)
		}
		if got := describeELFError("./prog", err).Error(); got != tc.want {
			t.Errorf("describeELFError(%v) = %q, want %q", err, got, tc.want)
		}
	}
	if _, err := lineinfo.Read(truncated); err == nil || err.Error() != "lineinfo: EOF" {
		t.Errorf("lineinfo.Read(truncated) = %v, want lineinfo: EOF", err)
	}
}
