package profile

import (
	"fmt"
	"strconv"
)

// Validate checks p against the schema of docs/profile-format.md: the
// version, the required fields, the vocabulary of Mode and Site.Kind, the
// address notation, line numbers >= 1 and no duplicate lines or addresses.
// It returns a *FormatError for the first problem found, or an error
// wrapping ErrVersion.
func (p *Profile) Validate() error {
	if p.Version < oldestVersion || p.Version > Version {
		return versionError(p.Version, "")
	}
	if p.Executable == "" {
		return badField("executable", "empty")
	}
	switch p.Mode {
	case ModeLines, ModeFuncs, ModeLinesFuncs:
	default:
		return badField("mode", "%q: want %q, %q or %q", p.Mode, ModeLines, ModeFuncs, ModeLinesFuncs)
	}
	if err := p.Exit.validate(); err != nil {
		return err
	}
	modules, err := p.validateModules()
	if err != nil {
		return err
	}
	for _, check := range []func(map[string]bool) error{
		p.validateLines, p.validateFunctions, p.validateSites, p.validateDropped, p.validateTime, p.validateStacks, p.validateInstances,
		p.validateSources,
	} {
		if err := check(modules); err != nil {
			return err
		}
	}
	if err := p.validateBlocks(modules); err != nil {
		return err
	}
	return p.validateArcs(modules)
}

// badField returns the *FormatError of field, its message formatted as
// fmt.Sprintf does.
func badField(field, format string, args ...any) error {
	return &FormatError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// validateModules checks p.Modules, for Validate, and returns the set of
// module paths an entry may name: "" (the executable) and each module's.
func (p *Profile) validateModules() (map[string]bool, error) {
	modules := map[string]bool{"": true}
	for i, m := range p.Modules {
		field := "modules[" + strconv.Itoa(i) + "]"
		if m.Path == "" {
			return nil, badField(field+".path", "empty")
		}
		if modules[m.Path] || m.Path == p.Executable {
			return nil, badField(field, "%q listed twice", m.Path)
		}
		modules[m.Path] = true
		switch m.Kind {
		case ModuleExecutable, ModuleLibrary:
		default:
			return nil, badField(field+".kind", "%q: want %q or %q", m.Kind, ModuleExecutable, ModuleLibrary)
		}
	}
	return modules, nil
}

// checkModule checks that the entry at field names one of modules.
func checkModule(modules map[string]bool, field, m string) error {
	if !modules[m] {
		return badField(field+".module", "%q is not in modules", m)
	}
	return nil
}

// validateLines checks p.Lines, for Validate.
func (p *Profile) validateLines(modules map[string]bool) error {
	type fileLine struct {
		module, file string
		line         int
	}
	lines := make(map[fileLine]bool, len(p.Lines))
	for i, l := range p.Lines {
		field := "lines[" + strconv.Itoa(i) + "]"
		if err := checkModule(modules, field, l.Module); err != nil {
			return err
		}
		if l.File == "" {
			return badField(field+".file", "empty")
		}
		if l.Line < 1 {
			return badField(field+".line", "%d: want >= 1", l.Line)
		}
		k := fileLine{l.Module, l.File, l.Line}
		if lines[k] {
			return badField(field, "%q line %d listed twice", l.File, l.Line)
		}
		lines[k] = true
	}
	return nil
}

// validateFunctions checks p.Functions, for Validate.
func (p *Profile) validateFunctions(modules map[string]bool) error {
	funcs := make(map[modAddr]bool, len(p.Functions))
	for i, f := range p.Functions {
		field := "functions[" + strconv.Itoa(i) + "]"
		if err := checkModule(modules, field, f.Module); err != nil {
			return err
		}
		if f.Name == "" {
			return badField(field+".name", "empty")
		}
		if f.Line < 0 {
			return badField(field+".line", "%d: want >= 0", f.Line)
		}
		for _, n := range []struct {
			name string
			v    int
		}{{"blocks", f.Blocks}, {"blocks_executed", f.BlocksExecuted}, {"edges", f.Edges}} {
			if n.v < 0 {
				return badField(field+"."+n.name, "%d: want >= 0", n.v)
			}
		}
		if f.BlocksExecuted > f.Blocks {
			return badField(field+".blocks_executed", "%d: more than the function's %d blocks", f.BlocksExecuted, f.Blocks)
		}
		a := f.Address
		if funcs[modAddr{f.Module, a}] {
			return badField(field, "address %s listed twice", f.Address)
		}
		funcs[modAddr{f.Module, a}] = true
	}
	return nil
}

// validateSites checks p.Sites, for Validate.
func (p *Profile) validateSites(modules map[string]bool) error {
	sites := make(map[modAddr]bool, len(p.Sites))
	for i, s := range p.Sites {
		field := "sites[" + strconv.Itoa(i) + "]"
		if err := checkModule(modules, field, s.Module); err != nil {
			return err
		}
		a := s.Address
		if sites[modAddr{s.Module, a}] {
			return badField(field, "address %s listed twice", s.Address)
		}
		sites[modAddr{s.Module, a}] = true
		if !validKind(s.Kind) {
			return badField(field+".kind", "%q: want %q, %q or %q, or a list with %q", s.Kind, KindLine, KindFunc, KindLineFunc, KindBlock)
		}
	}
	return nil
}

// validateDropped checks p.Dropped, for Validate.
func (p *Profile) validateDropped(modules map[string]bool) error {
	for i, d := range p.Dropped {
		field := "dropped[" + strconv.Itoa(i) + "]"
		if err := checkModule(modules, field, d.Module); err != nil {
			return err
		}
		if d.Reason == "" {
			return badField(field+".reason", "empty")
		}
	}
	return nil
}

// validate checks that e describes one way a run can end (an exit code, a
// signal, a detach or a target still running) and that a place of death
// comes only with a fatal signal, for Validate.
func (e *Exit) validate() error {
	bad := func(field, format string, args ...any) error {
		return &FormatError{Field: "exit." + field, Msg: fmt.Sprintf(format, args...)}
	}
	if e.Code != nil && e.Signal != "" {
		return bad("code", "both an exit code and a signal (%q)", e.Signal)
	}
	if e.Detached && (e.Code != nil || e.Signal != "") {
		return bad("detached", "a detached target has no exit code or signal")
	}
	if e.Running && (e.Code != nil || e.Signal != "" || e.Detached) {
		return bad("running", "a running target has no exit code, signal or detach")
	}
	// exit(2) keeps the low 8 bits of the status: wait(2) cannot report more.
	if e.Code != nil && (*e.Code < 0 || *e.Code > 255) {
		return bad("code", "%d: want 0 to 255", *e.Code)
	}
	n, known := SignalNumber(e.Signal)
	if e.Signal != "" && !known {
		return bad("signal", "%q: want a Linux signal name such as \"SIGSEGV\", or \"signal N\" with N from 1 to %d", e.Signal, maxSignal)
	}
	if e.FaultAddress != nil {
		switch n {
		case 4, 7, 8, 11: // SIGILL, SIGBUS, SIGFPE, SIGSEGV: the signals with si_addr (sigaction(2))
		default:
			return bad("fault_address", "given for %s: only SIGSEGV, SIGBUS, SIGILL and SIGFPE have one", describeSignal(e.Signal))
		}
	}
	if !known && (e.PC != nil || e.Function != "" || e.File != "" || e.Line != 0 || e.Module != "") {
		field := "pc"
		switch {
		case e.PC != nil:
		case e.Function != "":
			field = "function"
		case e.File != "":
			field = "file"
		case e.Line != 0:
			field = "line"
		default:
			field = "module"
		}
		return bad(field, "a place of death without a fatal signal")
	}
	if e.PCOutside && e.PC == nil {
		return bad("pc_outside", "true without a pc")
	}
	if e.Line < 0 {
		return bad("line", "%d: want >= 0", e.Line)
	}
	return nil
}

// describeSignal names a signal for a message, or says there is none.
func describeSignal(s string) string {
	if s == "" {
		return "an exit without a signal"
	}
	return s
}

// versionError reports a profile of format version v, which this package
// does not read; path, if not "", names the file.
func versionError(v int, path string) error {
	in := ""
	if path != "" {
		in = " in " + path
	}
	return fmt.Errorf("%w %d%s: this patchprof reads versions %d to %d", ErrVersion, v, in, oldestVersion, Version)
}
