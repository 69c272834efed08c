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
	// TotalSamples is every sample of the run (the profile's
	// Time.Samples), the denominator of the blocks' TIME share, as in the
	// listing; 0 when the run was not sampled (--time), and then there
	// are no time columns.
	TotalSamples uint64
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
	// Samples and TimeNS are then the block's sampled CPU time (--time):
	// the samples whose PC lies in the block, and the time they stand for.
	Samples, TimeNS uint64
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
// leaving it. A function with TotalSamples has the listing's three time
// columns beside each block's count: its share of all the samples, its
// time per execution (time over count, the cost of one pass through the
// block) and its samples, marked "~" below the listing's threshold.
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
		lead := disasmLeads(f)
		r.section()
		head := "DISASSEMBLY OF " + escapeControl(DisplayName(f.Name))
		if f.Module != "" {
			head += " in " + r.display(f.Module)
		}
		r.line(fmt.Sprintf("%s (called %d times)", head, f.Calls))
		r.line(lead.head + "  ADDRESS   INSTRUCTION")
		file, line := "", 0
		for k, in := range f.Insts {
			if in.File != "" && (in.File != file || in.Line != line) {
				file, line = in.File, in.Line
				r.line(lead.blank + "  " + r.display(file) + ":" + strconv.Itoa(line) + "  " + text(file, line))
			}
			r.line(fmt.Sprintf("%s  %8x:  %s", lead.rows[k], in.Addr, in.Text))
			if len(in.Out) > 0 {
				var parts []string
				for _, e := range in.Out {
					parts = append(parts, fmt.Sprintf("%s %#x %d", e.Kind, e.To, e.Count))
				}
				r.line(lead.blank + "            -> " + strings.Join(parts, ", "))
			}
		}
	}
	if _, err := w.Write(r.buf.Bytes()); err != nil {
		return fmt.Errorf("write disassembly: %w", err)
	}
	return nil
}

// disasmLead is the left part of a function's disassembly rows, aligned:
// the count (and time) columns' header, each instruction's cells (filled
// on a block's first instruction) and the blank cells of the other lines.
type disasmLead struct {
	head, blank string
	rows        []string
}

// disasmLeads lays out the count column of f, and its time columns when f
// has TotalSamples.
func disasmLeads(f DisasmFunc) disasmLead {
	cw := len("COUNT")
	var cells [][3]string
	if f.TotalSamples > 0 {
		cells = make([][3]string, len(f.Insts))
	}
	for k, in := range f.Insts {
		if !in.Block {
			continue
		}
		cw = max(cw, len(strconv.FormatUint(in.Count, 10)))
		if cells != nil {
			share, per, n := timeCells(timeOf{in.Samples, in.TimeNS}, in.Count, f.TotalSamples)
			cells[k] = [3]string{share, per, n}
		}
	}
	l := disasmLead{head: padLeft("COUNT", cw), blank: padLeft("", cw), rows: make([]string, len(f.Insts))}
	var tw [3]int
	if cells != nil {
		tw = timeWidths(cells)
		l.head += timeHeader(tw)
		l.blank += timeColumns([3]string{}, tw)
	}
	for k, in := range f.Insts {
		count := ""
		if in.Block {
			count = strconv.FormatUint(in.Count, 10)
		}
		l.rows[k] = padLeft(count, cw)
		if cells != nil {
			l.rows[k] += timeColumns(cells[k], tw)
		}
	}
	return l
}
