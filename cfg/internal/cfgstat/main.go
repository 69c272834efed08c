package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"time"

	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/symtab"
)

func main() {
	verbose := flag.Bool("v", false, "list every unrecoverable function")
	dump := flag.String("func", "", "print the graph of functions matching `REGEXP`")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: cfgstat [-v] [-func REGEXP] EXECUTABLE")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *verbose, *dump); err != nil {
		fmt.Fprintln(os.Stderr, "cfgstat:", err)
		os.Exit(1)
	}
}

func run(path string, verbose bool, dump string) error {
	var re *regexp.Regexp
	if dump != "" {
		var err error
		if re, err = regexp.Compile(dump); err != nil {
			return err
		}
	}
	st, err := symtab.Open(path)
	if err != nil {
		return err
	}
	defer st.Close()
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	im, err := cfg.NewELFImage(f)
	if err != nil {
		return err
	}
	names := cfg.CalleeNames(st, im)
	reasons := map[string]int{}
	examples := map[string]string{}
	var blocks, edges, tables, ok int
	start := time.Now()
	writes := cfg.NewCalleeRegs(st).Writes
	for _, fn := range st.Funcs {
		code, have := st.Code(fn.Addr, int(fn.Size))
		if !have {
			reasons["no-code"]++
			continue
		}
		g, err := cfg.Build(cfg.Options{Name: fn.Name, Addr: fn.Addr, Code: code, Image: im, CalleeName: names, CalleeWrites: writes})
		var ce *cfg.Error
		if errors.As(err, &ce) {
			reasons[ce.Reason()]++
			if examples[ce.Reason()] == "" {
				examples[ce.Reason()] = ce.Error()
			}
			if verbose {
				fmt.Println(ce)
			}
			continue
		} else if err != nil {
			return err
		}
		ok++
		blocks += len(g.Blocks)
		edges += len(g.Edges)
		tables += len(g.Tables)
		if re != nil && re.MatchString(fn.Name) {
			printGraph(g)
		}
	}
	elapsed := time.Since(start)
	fmt.Printf("%s: %d functions, %d recovered (%d blocks, %d edges, %d jump tables), %d not recoverable, in %v\n",
		path, len(st.Funcs), ok, blocks, edges, tables, len(st.Funcs)-ok, elapsed.Round(time.Millisecond))
	var rs []string
	for r := range reasons {
		rs = append(rs, r)
	}
	sort.Strings(rs)
	for _, r := range rs {
		fmt.Printf("  %-16s %6d  e.g. %s\n", r, reasons[r], examples[r])
	}
	return nil
}

func printGraph(g *cfg.Graph) {
	fmt.Printf("%s %#x-%#x: %d blocks, padding %d\n", g.Name, g.Addr, g.End, len(g.Blocks), g.Padding)
	for i, b := range g.Blocks {
		fmt.Printf("  b%d %#x-%#x %d insts %v:", i, b.Start, b.End, b.Insts, b.Term)
		for _, e := range g.Succs(i) {
			if e.To == cfg.Outside {
				fmt.Printf(" %v->%#x", e.Kind, e.Target)
			} else {
				fmt.Printf(" %v->b%d", e.Kind, e.To)
			}
		}
		fmt.Println()
	}
	for _, c := range g.Calls {
		fmt.Printf("  call %#x -> %#x %s noreturn=%v (b%d)\n", c.Addr, c.Target, c.Name, c.NoReturn, c.Block)
	}
	for _, t := range g.Tables {
		fmt.Printf("  table at %#x for jump %#x: %d entries of %d bytes\n", t.Base, t.Jump, len(t.Targets), t.EntrySize)
	}
}
