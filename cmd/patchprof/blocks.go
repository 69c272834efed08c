package main

import (
	"flag"
	"io"
	"regexp"

	"github.com/patchprof/patchprof/output"
	"github.com/patchprof/patchprof/profile"
	"github.com/patchprof/patchprof/profiler"
)

// blockFlags are --blocks, --calls and --disasm.
type blockFlags struct {
	blocks bool
	calls  bool
	disasm string
	re     *regexp.Regexp
}

func registerBlockFlags(fs *flag.FlagSet) *blockFlags {
	b := &blockFlags{}
	fs.BoolVar(&b.blocks, "blocks", false, "count basic blocks and the edges between them (implies --funcs and --calls): blocks per function and each conditional branch's outcomes, like gcov -b")
	fs.BoolVar(&b.calls, "calls", false, "count the call graph (implies --funcs): each function's callers and callees, with the calls of each call site")
	fs.StringVar(&b.disasm, "disasm", "", "after the report, print an annotated disassembly of the functions whose name matches `REGEXP` (implies --blocks)")
	return b
}

// apply checks the flags and adds what they imply: --disasm needs block
// counts (which imply function entries: profiler.Config.Blocks).
func (b *blockFlags) apply() error {
	if b.disasm != "" {
		re, err := regexp.Compile(b.disasm)
		if err != nil {
			return failed("--disasm %q is not a valid regular expression: %v", b.disasm, err)
		}
		b.re = re
		b.blocks = true
	}
	return nil
}

// writeDisasm writes the annotated disassembly of the block-counted
// functions matching --disasm (profiler.Disasm) to w; p is the run's
// profile, for the blocks' sampled time.
func (b *blockFlags) writeDisasm(w io.Writer, prof *profiler.Profiler, p *profile.Profile, opt output.Options) error {
	if b.re == nil {
		return nil
	}
	fns := prof.Disasm(b.re.MatchString, p)
	if len(fns) == 0 {
		return failed("--disasm %q matches no function whose blocks were counted", b.disasm)
	}
	return output.WriteDisasm(w, fns, opt)
}
