package output

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// A DisasmFunc is one function's annotated disassembly (--disasm): its
// instructions with their source lines, and the counts of its blocks and
// edges. The caller decodes the machine code (output never reads an
// executable); WriteDisasm lays it out.
type DisasmFunc struct {
	Name   string // symbol name
	Module string // the module's path, "" for the executable
	Calls  uint64 // the function's call count
	Insts  []DisasmInst
}

// A DisasmInst is one instruction of a DisasmFunc, in address order.
type DisasmInst struct {
	Addr uint64
	Text string // the instruction as a disassembler prints it
	File string // its source line, from the line table ("" if unknown)
	Line int
	// Block is set on the first instruction of a basic block; Count is
	// then the block's count.
	Block bool
	Count uint64
	// Out lists the edges leaving the block whose last instruction this
	// is, with their counts ("taken 0x401150 999").
	Out []DisasmEdge
}

// A DisasmEdge is one edge leaving a block.
type DisasmEdge struct {
	Kind  string // "taken", "fallthrough" or "jumptable"
	To    uint64 // the block it enters, or the address outside the function
	Count uint64
}

// WriteDisasm writes the annotated disassembly of fns to w, in the manner of
// perf annotate and objdump -S: for each function a header with its calls,
// then its instructions, each block's count in the left column beside its
// first instruction, the source line (file:line and text, read like the
// listing's sources, see Options) above the instructions whose line
// changes, and after a block's last instruction the counts of the edges
// leaving it.
func WriteDisasm(w io.Writer, fns []DisasmFunc, opt Options) error {
	if opt.ReadFile == nil {
		opt.ReadFile = os.ReadFile
	}
	r := &report{opt: &opt, cwd: cleanDir(opt.Cwd)}
	sources := map[string][]string{}
	text := func(file string, line int) string {
		src, ok := sources[file]
		if !ok {
			src, _ = r.source(file)
			sources[file] = src
		}
		if line >= 1 && line <= len(src) {
			return strings.TrimSpace(src[line-1])
		}
		return ""
	}
	for _, f := range fns {
		cw := len("COUNT")
		for _, in := range f.Insts {
			if in.Block {
				cw = max(cw, len(strconv.FormatUint(in.Count, 10)))
			}
		}
		r.section()
		head := "DISASSEMBLY OF " + escapeControl(DisplayName(f.Name))
		if f.Module != "" {
			head += " in " + r.display(f.Module)
		}
		r.line(fmt.Sprintf("%s (called %d times)", head, f.Calls))
		r.line(padLeft("COUNT", cw) + "  ADDRESS   INSTRUCTION")
		file, line := "", 0
		for _, in := range f.Insts {
			if in.File != "" && (in.File != file || in.Line != line) {
				file, line = in.File, in.Line
				r.line(padLeft("", cw) + "  " + r.display(file) + ":" + strconv.Itoa(line) + "  " + text(file, line))
			}
			count := ""
			if in.Block {
				count = strconv.FormatUint(in.Count, 10)
			}
			r.line(fmt.Sprintf("%s  %8x:  %s", padLeft(count, cw), in.Addr, in.Text))
			if len(in.Out) > 0 {
				var parts []string
				for _, e := range in.Out {
					parts = append(parts, fmt.Sprintf("%s %#x %d", e.Kind, e.To, e.Count))
				}
				r.line(padLeft("", cw) + "            -> " + strings.Join(parts, ", "))
			}
		}
	}
	if _, err := w.Write(r.buf.Bytes()); err != nil {
		return fmt.Errorf("write disassembly: %w", err)
	}
	return nil
}
