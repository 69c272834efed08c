package linemodel

import (
	"slices"
	"strings"

	"github.com/patchprof/patchprof/lineinfo"
	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
)

// The rows of a C function's closing brace: gcov counts them only where
// GCC has a statement there.

// markEpilogue drops the rows of a C function's closing brace that hold
// only the epilogue (leave, pop, add to %rsp, ret: a row whose code runs to
// a RET and nothing else) when GCC has no statement there: the function returns a
// value (its return statements are the statements), or is void and has a
// return statement of its own (GCC's shared return then has no location).
// The closing brace is the function's highest line; its rows that do more
// (run destructors, a landing pad) stay. code starts at base. It returns
// the closing brace's line and whether its epilogue is no statement.
func markEpilogue(rs []fnRow, code []byte, base uint64, sub *lineinfo.Subprogram, src []string, macros map[string]bool) (closing LineRef, noStmt bool) {
	if len(rs) == 0 || len(code) == 0 {
		return LineRef{}, false
	}
	last := rs[0].ref
	for _, r := range rs[1:] {
		if r.ref.File == last.File && r.ref.Line > last.Line {
			last = r.ref
		}
	}
	// Rows that run to the RET first, then rows that jump to one of those
	// (GCC's copy of a return value into %rax before the shared epilogue).
	var epi []int
	isEpi := map[uint64]bool{}
	for pass := 0; pass < 2; pass++ {
		for k, r := range rs {
			// A row at the entry is the function's whole body (a
			// one-line `{ return this; }` is mov %rdi,%rax; ret at
			// -O2): its return statement, which gcov counts.
			if r.ref != last || isEpi[r.addr] || r.addr <= base || r.addr-base >= uint64(len(code)) {
				continue
			}
			if onlyEpilogue(code[r.addr-base:], r.addr, isEpi) {
				epi = append(epi, k)
				isEpi[r.addr] = true
			}
		}
	}
	slices.Sort(epi)
	if sub.Void && (len(epi) == 0 || !voidReturns(rs, code, base, rs[epi[0]].addr, last, src, macros)) {
		return last, false
	}
	for _, k := range epi {
		rs[k].drop = true
	}
	return last, true
}

// onlyEpilogue reports whether code (at addr) restores the frame and
// returns and does nothing else, up to its RET or a JMP to a row in
// ends. Moving a value into %rax or %xmm0 (the return value) is allowed.
func onlyEpilogue(code []byte, addr uint64, ends map[uint64]bool) bool {
	for off := 0; off < len(code); {
		inst, err := symtab.DecodeInst(code[off:])
		if err != nil || inst.Len == 0 {
			return false
		}
		switch inst.Op {
		case x86asm.RET:
			return true
		case x86asm.JMP:
			rel, ok := inst.Args[0].(x86asm.Rel)
			return ok && ends[uint64(int64(addr)+int64(off+inst.Len)+int64(rel))]
		case x86asm.LEAVE, x86asm.POP, x86asm.NOP:
		case x86asm.MOV:
			// Restoring a callee-saved register from the frame, or
			// placing the return value.
			_, fromMem := inst.Args[1].(x86asm.Mem)
			if !fromMem && inst.Args[0] != x86asm.RAX && inst.Args[0] != x86asm.EAX {
				return false
			}
		case x86asm.MOVQ, x86asm.MOVD, x86asm.MOVSD, x86asm.MOVSS, x86asm.MOVAPS, x86asm.MOVAPD:
			// Placing a floating-point return value in %xmm0; g++ -O0
			// passes a double returned from several places through
			// %rax and back (movq %xmm0,%rax; movq %rax,%xmm0).
			if inst.Args[0] != x86asm.X0 && (inst.Args[0] != x86asm.RAX || inst.Args[1] != x86asm.X0) {
				return false
			}
		case x86asm.ADD, x86asm.SUB, x86asm.LEA:
			// Releasing the frame: add $n, %rsp; lea -n(%rbp), %rsp.
			if inst.Args[0] != x86asm.RSP {
				return false
			}
		default:
			return false
		}
		off += inst.Len
	}
	return false
}

// returnStmt matches a `return;` statement.
var returnStmt = lazyRE(`(^|[;{})]\s*)return\s*;`)

// voidReturns reports whether a void function has a return statement of
// its own. With the source of the closing brace's file (src, nil when
// unknown) it reads the function's lines for one (comments left out, and
// a return with no row inside a preprocessor conditional, which may have
// been compiled out, or a use of one of macros, the file's macros that
// expand to a return statement: unity's RETURN_IF_FAIL_OR_IGNORE): the
// code cannot tell a `return;` whose jmp shares the row of the statement
// before it, nor a break's lone nop falling into the epilogue from a
// return's. Without the source it asks hasReturn.
func voidReturns(rs []fnRow, code []byte, base, start uint64, closing LineRef, src []string, macros map[string]bool) bool {
	if src == nil || closing.Line > len(src) {
		return hasReturn(rs, code, base, start)
	}
	lo := closing.Line
	for _, r := range rs {
		if r.ref.File == closing.File {
			lo = min(lo, r.ref.Line)
		}
	}
	rowed := map[int]bool{}
	for _, r := range rs {
		if r.ref.File == closing.File {
			rowed[r.ref.Line] = true
		}
	}
	comment := false
	depth := 0 // preprocessor conditionals open in the function
	for l := max(lo, 1); l < closing.Line; l++ {
		var b strings.Builder
		line := src[l-1]
		if !comment {
			switch kind, _ := directive(strings.TrimSpace(line)); kind {
			case ppIf:
				depth++
			case ppEndif:
				depth = max(depth-1, 0)
			}
		}
		for i := 0; i < len(line); i++ {
			switch {
			case comment:
				if strings.HasPrefix(line[i:], "*/") {
					comment = false
					i++
				}
			case strings.HasPrefix(line[i:], "/*"):
				comment = true
				i++
			case strings.HasPrefix(line[i:], "//"):
				i = len(line)
			default:
				b.WriteByte(line[i])
			}
		}
		// A return with no code may be compiled out.
		t := b.String()
		if (strings.Contains(t, "return") && returnStmt.MatchString(strings.TrimSpace(t)) || usesMacro(t, macros)) && (rowed[l] || depth == 0) {
			return true
		}
	}
	return false
}

// hasReturn reports whether a void function has a return statement of its
// own: a row before the epilogue at start whose code is one NOP falling
// into it or one JMP to it (how GCC -O0 emits `return;`).
func hasReturn(rs []fnRow, code []byte, base, start uint64) bool {
	for k, r := range rs {
		a := r.addr
		if a >= start || a < base {
			continue
		}
		next := start
		for _, o := range rs[k+1:] {
			if o.addr > a {
				next = o.addr
				break
			}
		}
		inst, err := symtab.DecodeInst(code[a-base:])
		if err != nil || a+uint64(inst.Len) != next {
			continue
		}
		switch inst.Op {
		case x86asm.NOP:
			if next == start {
				return true
			}
		case x86asm.JMP:
			if rel, ok := inst.Args[0].(x86asm.Rel); ok && uint64(int64(next)+int64(rel)) == start {
				return true
			}
		}
	}
	return false
}

// returnMacro matches a #define whose body ends in a return statement
// (`return` at its end, the use supplying the semicolon, or `return;`):
// group 1 is its name.
var returnMacro = lazyRE(`^\s*#\s*define\s+([A-Za-z_]\w*)(?:\([^)]*\))?\s.*\breturn\s*;?\s*\}?\s*$`)

// returnMacros returns the macros of file (its lines src) whose body is
// or ends in a return statement, read once per file.
func (m *Model) returnMacros(file string, src []string) map[string]bool {
	if ms, ok := m.retMacros[file]; ok {
		return ms
	}
	if m.retMacros == nil {
		m.retMacros = make(map[string]map[string]bool)
	}
	var ms map[string]bool
	for _, line := range defineLines(src) {
		// Most #defines return nothing; the expression is slow to
		// refuse them.
		if !strings.Contains(line, "return") {
			continue
		}
		if sm := returnMacro.FindStringSubmatch(line); sm != nil {
			if ms == nil {
				ms = make(map[string]bool)
			}
			ms[sm[1]] = true
		}
	}
	m.retMacros[file] = ms
	return ms
}

// defineLines returns the lines of src that may hold a #define (those
// naming "define"), each with the lines a trailing backslash continues
// it over joined to it.
func defineLines(src []string) []string {
	var out []string
	for k := 0; k < len(src); k++ {
		line := src[k]
		if !strings.Contains(line, "define") {
			continue
		}
		for strings.HasSuffix(strings.TrimRight(line, " \t"), "\\") && k+1 < len(src) {
			k++
			line = strings.TrimSuffix(strings.TrimRight(line, " \t"), "\\") + " " + src[k]
		}
		out = append(out, line)
	}
	return out
}

// usesMacro reports whether the code text names one of macros.
func usesMacro(text string, macros map[string]bool) bool {
	if len(macros) == 0 {
		return false
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c != '_' && !isLetter(c) {
			i++
			continue
		}
		j := i + 1
		for j < len(text) && (text[j] == '_' || isLetter(text[j]) || text[j] >= '0' && text[j] <= '9') {
			j++
		}
		if macros[text[i:j]] {
			return true
		}
		i = j
	}
	return false
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
