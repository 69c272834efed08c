package relocate

import (
	"encoding/binary"
	"fmt"
	"sync"

	"golang.org/x/arch/x86/x86asm"
)

// Reading an instruction before relocating it: x86asm decodes it, and this
// file reads its prefixes and ModRM byte a second time, independently, so
// that an instruction the two readings disagree on is refused rather than
// copied with a stale displacement.

// Decode decodes the 64-bit instruction at the start of code as Relocate
// reads it, turning x86asm's failures (and a panic, should it ever have one)
// into an *Error without an address: an instruction whose length or
// operation depends on the bytes after it is refused (ReasonAmbiguous).
func Decode(code []byte) (inst x86asm.Inst, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Bytes: prefix(code, 15), Reason: fmt.Sprintf("%s: %v", ReasonDecoderPanics, r)}
		}
	}()
	if len(code) == 0 {
		return inst, &Error{Reason: ReasonTruncated}
	}
	inst, derr := x86asm.Decode(code, 64)
	if derr != nil || inst.Op == 0 || inst.Len <= 0 || inst.Len > len(code) {
		// x86asm reports a cut-off instruction in several ways; padding
		// it out tells a truncated instruction from an unknown one.
		if len(code) < 15 {
			pad := make([]byte, 15)
			copy(pad, code)
			if p, err := x86asm.Decode(pad, 64); err == nil && p.Op != 0 && p.Len > len(code) {
				return inst, &Error{Bytes: prefix(code, 15), Reason: ReasonTruncated}
			}
		}
		return inst, &Error{Bytes: prefix(code, 15), Reason: ReasonDecode}
	}
	// The CPU decodes an instruction from its own bytes. x86asm's AVX
	// decoder looks past them (it picks among candidates by the byte after
	// the opcode even where there is no ModRM), so an instruction whose
	// length or operation changes with what follows it, as it will in the
	// slot, is not trusted.
	if ambiguous(code[:inst.Len], inst) {
		return inst, &Error{Bytes: prefix(code, inst.Len), Reason: ReasonAmbiguous}
	}
	return inst, nil
}

// ambiguous reports whether raw, an instruction x86asm read as inst, decodes
// to another operation or length when other bytes follow it. The verdict
// depends on raw alone, and is kept: the same instructions are decoded by
// the flow graph, the jump planning and again at patch time, and these
// four decodes were four fifths of all decoding (a tenth of a SQLite run).
func ambiguous(raw []byte, inst x86asm.Inst) bool {
	verdicts.Lock()
	v, ok := verdicts.m[string(raw)] // a lookup copies nothing
	verdicts.Unlock()
	if ok && v.op == inst.Op {
		return v.ambiguous
	}
	amb := false
	var buf [2 * 15]byte
	for _, fill := range [...]byte{0x00, 0xFF, 0xE9, 0x05} {
		n := copy(buf[:], raw)
		for i := n; i < len(buf); i++ {
			buf[i] = fill
		}
		again, err := x86asm.Decode(buf[:], 64)
		if err != nil || again.Op != inst.Op || again.Len != inst.Len {
			amb = true
			break
		}
	}
	verdicts.Lock()
	if len(verdicts.m) < maxVerdicts {
		verdicts.m[string(raw)] = verdict{op: inst.Op, ambiguous: amb}
	}
	verdicts.Unlock()
	return amb
}

// maxVerdicts bounds the verdicts kept: a large program has tens of
// thousands of distinct instructions.
const maxVerdicts = 1 << 20

type verdict struct {
	op        x86asm.Op
	ambiguous bool
}

var verdicts = struct {
	sync.Mutex
	m map[string]verdict
}{m: map[string]verdict{}}

// prefix returns a copy of at most the first n bytes of b, for an error that
// must not pin the caller's buffer.
func prefix(b []byte, n int) []byte {
	if len(b) > n {
		b = b[:n]
	}
	return append([]byte(nil), b...)
}

// A layout is the shape of an instruction's encoding as this file reads it,
// independently of x86asm: where the prefixes end, which opcode map, and
// where the ModRM byte is. It is used to check x86asm's account of
// RIP-relative operands (its AVX decoder reports [rip+disp32] as an absolute
// [disp32]) and to find the bytes to rewrite.
type layout struct {
	rexAt  int  // index just past the legacy prefixes (the REX byte, if any)
	rex    byte // the REX prefix, 0 if none
	opcode int  // index of the opcode byte within its map
	opmap  int  // 0 one-byte, 1 0F, 2 0F38, 3 0F3A
	vex    bool // VEX or EVEX encoded
	modrm  int  // index of the ModRM byte, -1 if none
	rip    bool // ModRM mod=00 rm=101: [rip+disp32] in 64-bit mode

	modrmByte byte
}

// reg returns the ModRM reg field (the /digit of group opcodes), or -1.
func (l layout) reg() int {
	if l.modrm < 0 {
		return -1
	}
	return int(l.modrmByte >> 3 & 7)
}

// scanLayout reads raw's prefixes, opcode and ModRM position (Intel SDM vol.
// 2, 2.1 "Instruction Format", 2.2.1 REX, 2.3 VEX, 2.7 EVEX).
func scanLayout(raw []byte) (layout, string) {
	l := layout{modrm: -1}
	i, reason := l.scanPrefixes(raw)
	if reason != "" {
		return l, reason
	}
	hasModRM, reason := l.scanOpcode(raw, i)
	if reason != "" {
		return l, reason
	}
	if l.opcode >= len(raw) {
		return l, ReasonTruncated
	}
	if hasModRM {
		l.modrm = l.opcode + 1
		if l.modrm >= len(raw) {
			return l, ReasonTruncated
		}
		l.modrmByte = raw[l.modrm]
		l.rip = raw[l.modrm]>>6 == 0 && raw[l.modrm]&7 == 5
		if l.rip && l.modrm+5 > len(raw) {
			return l, ReasonTruncated
		}
	}
	return l, l.checkLength(raw, hasModRM)
}

// scanPrefixes reads the legacy prefixes and a REX prefix at the start of
// raw into l, and returns the index of the byte after them.
func (l *layout) scanPrefixes(raw []byte) (int, string) {
	i := 0
	for i < len(raw) && isLegacyPrefix(raw[i]) {
		i++
	}
	l.rexAt = i
	if i < len(raw) && raw[i]&0xF0 == 0x40 {
		l.rex = raw[i]
		i++
		// A REX not right before the opcode is ignored by the CPU;
		// x86asm's and our reading would have to agree on that.
		if i < len(raw) && (raw[i]&0xF0 == 0x40 || isLegacyPrefix(raw[i])) {
			return i, ReasonPrefixes
		}
	}
	if i >= len(raw) {
		return i, ReasonTruncated
	}
	return i, ""
}

// scanOpcode reads the opcode map and the opcode's index into l, from the
// byte at raw[i] after the prefixes, and reports whether a ModRM byte
// follows the opcode.
func (l *layout) scanOpcode(raw []byte, i int) (bool, string) {
	switch b := raw[i]; {
	case b == 0xC4 || b == 0xC5 || b == 0x62:
		return l.scanVEX(raw, i)
	case b == 0x0F:
		if i+1 >= len(raw) {
			return false, ReasonTruncated
		}
		switch raw[i+1] {
		case 0x38:
			l.opmap, l.opcode = 2, i+2
			return true, ""
		case 0x3A:
			l.opmap, l.opcode = 3, i+2
			return true, ""
		}
		l.opmap, l.opcode = 1, i+1
		return modrm0F[raw[i+1]>>4]&(1<<(raw[i+1]&15)) != 0, ""
	default:
		l.opcode = i
		return modrm1[b>>4]&(1<<(b&15)) != 0, ""
	}
}

// scanVEX reads a VEX (C4, C5) or EVEX (62) prefix at raw[i] and the
// opcode after it into l, and reports whether a ModRM byte follows.
func (l *layout) scanVEX(raw []byte, i int) (bool, string) {
	// In 64-bit mode these are always VEX/EVEX (LES, LDS and BOUND are
	// invalid there). A REX or 66/F2/F3/F0 before them is #UD.
	if l.rex != 0 {
		return false, ReasonPrefixes
	}
	b := raw[i]
	n := map[byte]int{0xC5: 2, 0xC4: 3, 0x62: 4}[b]
	if i+n >= len(raw) {
		return false, ReasonTruncated
	}
	switch b {
	case 0xC5:
		l.opmap = 1
	case 0xC4:
		l.opmap = int(raw[i+1] & 0x1F)
	case 0x62:
		l.opmap = int(raw[i+1] & 0x07)
	}
	if l.opmap < 1 || l.opmap > 3 {
		return false, ReasonOpcodeMap
	}
	l.vex = true
	i += n
	l.opcode = i
	// VZEROUPPER and VZEROALL (VEX 0F 77) are the only VEX instructions
	// without ModRM.
	return !(l.opmap == 1 && raw[i] == 0x77 && b != 0x62), ""
}

// checkLength checks that raw, the decoder's length of the instruction,
// covers what the layout says is there: the opcode, and the ModRM byte with
// its SIB and displacement.
func (l layout) checkLength(raw []byte, hasModRM bool) string {
	min := l.opcode + 1
	if hasModRM {
		mod, rm := raw[l.modrm]>>6, raw[l.modrm]&7
		min = l.modrm + 1
		if mod != 3 && rm == 4 {
			if min >= len(raw) {
				return ReasonDisagree
			}
			if mod == 0 && raw[min]&7 == 5 {
				min += 4 // SIB with no base: disp32
			}
			min++
		}
		switch {
		case mod == 1:
			min++
		case mod == 2, mod == 0 && rm == 5:
			min += 4
		}
	} else if l.vex && len(raw) != min {
		return ReasonDisagree // VEX without ModRM has no operands
	}
	if len(raw) < min {
		return ReasonDisagree
	}
	return ""
}

// isLegacyPrefix reports whether b is one of the legacy prefixes (Intel SDM
// vol. 2, 2.1.1), which may precede REX but not follow it.
func isLegacyPrefix(b byte) bool {
	switch b {
	case 0xF0, 0xF2, 0xF3, 0x2E, 0x36, 0x3E, 0x26, 0x64, 0x65, 0x66, 0x67:
		return true
	}
	return false
}

// checkRIP compares x86asm's account of a RIP-relative operand with the
// layout's and reports whether there is one. Any disagreement refuses the
// instruction: copying it with a stale displacement would silently read or
// write the wrong memory.
func checkRIP(raw []byte, inst x86asm.Inst, l layout) (bool, string) {
	var ripArg, eipArg, absArg bool
	var disp int64
	if l.rip {
		disp = int64(int32(binary.LittleEndian.Uint32(raw[l.modrm+1:])))
	}
	for _, a := range inst.Args {
		m, ok := a.(x86asm.Mem)
		if !ok {
			continue
		}
		switch {
		case m.Base == x86asm.RIP:
			ripArg = true
		case m.Base == x86asm.EIP:
			eipArg = true
		case m.Base == 0 && m.Index == 0 && l.rip && m.Disp == disp:
			absArg = true
		}
	}
	if eipArg {
		return false, ReasonEIPRelative
	}
	if !l.rip {
		if ripArg {
			return false, ReasonDisagree
		}
		return false, ""
	}
	for _, p := range raw[:l.rexAt] {
		if p == 0x67 {
			return false, ReasonEIPRelative
		}
	}
	switch {
	case ripArg && inst.PCRel == 4 && inst.PCRelOff == l.modrm+1:
		return true, ""
	case l.vex && absArg && inst.PCRel == 0:
		// x86asm v0.33's AVX decoder reads [rip+disp32] as [disp32].
		return true, ""
	}
	return false, ReasonDisagree
}

// modrm1 and modrm0F have bit b of word h set when opcode h<<4|b of the
// one-byte map or of the 0F map takes a ModRM byte (Intel SDM vol. 2,
// appendix A, opcode maps; 64-bit mode).
var modrm1 = [16]uint16{
	0x0: 0x0F0F, // ALU r/m forms 00-03, 08-0B
	0x1: 0x0F0F,
	0x2: 0x0F0F,
	0x3: 0x0F0F,
	0x6: 1<<3 | 1<<9 | 1<<11, // movsxd, imul r,r/m,imm32, imul r,r/m,imm8
	0x8: 0xFFFF,              // group 1, test, xchg, mov, lea, pop r/m
	0xC: 1<<0 | 1<<1 | 1<<6 | 1<<7,
	0xD: 0xFF0F, // shifts D0-D3, x87 D8-DF
	0xF: 1<<6 | 1<<7 | 1<<14 | 1<<15,
}

var modrm0F = [16]uint16{
	0x0: 0x0F | 1<<0xD | 1<<0xF, // groups 6/7, lar, lsl, prefetch, 3DNow!
	0x1: 0xFFFF,                 // SSE moves, hint nops, endbr
	0x2: 0xFF0F,                 // mov cr/dr, SSE
	0x4: 0xFFFF,                 // cmovcc
	0x5: 0xFFFF,
	0x6: 0xFFFF,
	0x7: 0xFFFF &^ (1 << 7), // all but emms
	0x9: 0xFFFF,             // setcc
	0xA: 1<<3 | 1<<4 | 1<<5 | 1<<0xB | 1<<0xC | 1<<0xD | 1<<0xE | 1<<0xF,
	0xB: 0xFFFF,
	0xC: 0x00FF, // xadd, cmpxchg, SSE, group 9; not bswap
	0xD: 0xFFFF,
	0xE: 0xFFFF,
	0xF: 0xFFFF,
}
