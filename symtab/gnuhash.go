package symtab

import (
	"debug/elf"
	"encoding/binary"
)

// exportsHashed looks name up through the GNU hash table of ef's dynamic
// symbols, as the dynamic linker itself does: a handful of small reads
// instead of the whole table (a C library's is thousands of symbols, which
// every library's check for the dynamic linker's notification function
// read and compared at every start). The table holds every defined
// dynamic symbol, all that accept can take. ok is false when ef has no
// such table, or it does not read as one: the caller scans.
//
// Layout (the GNU hash section, as glibc's dl-lookup.c reads it): nbuckets,
// symoffset, bloom_size, bloom_shift (4 bytes each), bloom_size 64-bit
// bloom words, nbuckets bucket words, then one chain word per symbol from
// symoffset on, whose low bit ends a bucket's chain.
func exportsHashed(ef *elf.File, name string, accept func(*elf.Symbol) bool) (value uint64, found, ok bool) {
	gh := ef.SectionByType(elf.SHT_GNU_HASH)
	if gh == nil || ef.Class != elf.ELFCLASS64 || gh.Link == 0 || int(gh.Link) >= len(ef.Sections) {
		return 0, false, false
	}
	ds := ef.Sections[gh.Link]
	if ds.Type != elf.SHT_DYNSYM || ds.Link == 0 || int(ds.Link) >= len(ef.Sections) {
		return 0, false, false
	}
	strs := ef.Sections[ds.Link]
	le := binary.LittleEndian
	var hdr [16]byte
	if _, err := gh.ReadAt(hdr[:], 0); err != nil {
		return 0, false, false
	}
	nbuckets, symoff := le.Uint32(hdr[0:]), le.Uint32(hdr[4:])
	bloomSize, shift := le.Uint32(hdr[8:]), le.Uint32(hdr[12:])
	if nbuckets == 0 || bloomSize == 0 {
		return 0, false, false
	}
	h := uint32(5381)
	for i := 0; i < len(name); i++ {
		h = h*33 + uint32(name[i])
	}
	var w [8]byte
	if _, err := gh.ReadAt(w[:], 16+8*int64((h/64)%bloomSize)); err != nil {
		return 0, false, false
	}
	if mask := uint64(1)<<(h%64) | uint64(1)<<((h>>(shift%32))%64); le.Uint64(w[:])&mask != mask {
		return 0, false, true // the bloom filter says no
	}
	buckets := 16 + 8*int64(bloomSize)
	if _, err := gh.ReadAt(w[:4], buckets+4*int64(h%nbuckets)); err != nil {
		return 0, false, false
	}
	ix := le.Uint32(w[:4])
	if ix < symoff {
		return 0, false, true // an empty bucket
	}
	const symSize = 24 // Elf64_Sym
	nsyms := ds.Size / symSize
	chain := buckets + 4*int64(nbuckets)
	var e [symSize]byte
	got := make([]byte, len(name)+1)
	for ; uint64(ix) < nsyms; ix++ {
		if _, err := gh.ReadAt(w[:4], chain+4*int64(ix-symoff)); err != nil {
			return 0, false, false
		}
		h2 := le.Uint32(w[:4])
		if h|1 == h2|1 {
			if _, err := ds.ReadAt(e[:], int64(ix)*symSize); err != nil {
				return 0, false, false
			}
			if _, err := strs.ReadAt(got, int64(le.Uint32(e[0:]))); err == nil && got[len(name)] == 0 && string(got[:len(name)]) == name {
				sym := elf.Symbol{Info: e[4], Section: elf.SectionIndex(le.Uint16(e[6:])), Value: le.Uint64(e[8:])}
				if accept(&sym) {
					return sym.Value, true, true
				}
			}
		}
		if h2&1 != 0 {
			return 0, false, true
		}
	}
	return 0, false, false // a chain that does not end: not a table
}
