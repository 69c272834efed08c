package lineinfo

import (
	"debug/dwarf"
	"debug/elf"
	"path/filepath"
	"sort"
	"strings"
)

// A Subprogram is what DWARF says about one function's source, beyond its
// line-table rows: where it is declared and whether it returns a value.
// gcov credits a function's entry to its declarator line (GCC's
// DECL_SOURCE_LOCATION), which is not where the line table puts the
// function's first instruction (that is the opening brace's line).
type Subprogram struct {
	Name     string
	LowPC    uint64 // link-time entry address
	DeclFile string // absolute, cleaned path ("" when unknown)
	DeclLine int    // 0 when unknown
	// Void is true when the function returns no value (no DW_AT_type).
	Void bool
	// Artificial is true for a function the compiler made up (an
	// implicit C++ constructor or destructor): gcov shows no lines for
	// it.
	Artificial bool
	// NoReturn is true for a function declared never to return
	// (DW_AT_noreturn [DWARF5 3.3.2]): GCC removes what follows a call
	// to it from its graph.
	NoReturn bool
	// Labels are the function's goto labels that have code
	// (DW_TAG_label with DW_AT_low_pc): gcov counts a label's line as
	// the block it starts, though no line-table row names it.
	Labels []Label
	// Lang is the DW_AT_language of its compilation unit [DWARF5 7.12],
	// 0 when unknown.
	Lang int
	// Locals are its local variables in its stack frame.
	Locals []Local
	// GCCO0 is true when its unit's DW_AT_producer is GCC's with no
	// optimization flag, or -O0 last: the code the line model's
	// source-reading rules describe (-O0 keeps every statement in place
	// and merges no code of two statements).
	GCCO0 bool
}

// SubprogramAt returns the subprogram of subs (sorted by LowPC) whose
// entry is addr, or nil.
func SubprogramAt(subs []Subprogram, addr uint64) *Subprogram {
	i := sort.Search(len(subs), func(i int) bool { return subs[i].LowPC >= addr })
	if i < len(subs) && subs[i].LowPC == addr {
		return &subs[i]
	}
	return nil
}

// gccO0 reports whether a DW_AT_producer is GCC's (GCC records its
// command-line flags there by default, -grecord-gcc-switches) compiling
// at -O0: no -O flag, or -O0 the last one.
func gccO0(producer string) bool {
	if !strings.HasPrefix(producer, "GNU ") {
		return false
	}
	o0 := true
	for _, f := range strings.Fields(producer) {
		if strings.HasPrefix(f, "-O") {
			o0 = f == "-O0"
		}
	}
	return o0
}

// A Label is a source label at a code address.
type Label struct {
	Addr uint64
	File string
	Line int
}

// langGo is DW_LANG_Go.
const langGo = 0x16

// IsC reports whether lang is a C or C++ dialect, whose functions GCC's
// gcov describes.
func IsC(lang int) bool {
	switch lang {
	case 0x01, 0x02, 0x0c, 0x1d, 0x2c: // C89, C, C99, C11, C17
		return true
	case 0x04, 0x1a, 0x21, 0x2a, 0x2b: // C++, C++03, C++11, C++14, C++17/20
		return true
	}
	return false
}

// IsPlainC reports whether lang is a C dialect (not C++).
func IsPlainC(lang int) bool {
	switch lang {
	case 0x01, 0x02, 0x0c, 0x1d, 0x2c:
		return true
	}
	return false
}

// Subprograms returns the functions with code (DW_AT_low_pc) that the
// .debug_info of the ELF file at path describes, sorted by LowPC. Like
// Read, it never panics on a bad file; an executable without .debug_info
// gives none and no error.
func Subprograms(path string) (subs []Subprogram, err error) {
	err = withELF(path, ".debug_info", func(f *elf.File) error {
		if f.Section(".debug_info") == nil {
			return nil
		}
		d := take(path)
		if d == nil {
			var err error
			if d, err = newDebugSections(f).dwarf(); err != nil {
				return &DecodeError{Section: ".debug_info", Msg: err.Error()}
			}
		}
		var err error
		if subs, err = readSubprograms(d); err != nil {
			return err
		}
		return readLocals(d, subs)
	})
	if err != nil {
		return nil, err
	}
	return subs, nil
}

// readSubprograms walks every unit of d. A definition that refers to its
// declaration (DW_AT_specification, C++ methods defined outside their
// class) or to an abstract instance (DW_AT_abstract_origin) takes what it
// lacks from there.
func readSubprograms(d *dwarf.Data) ([]Subprogram, error) {
	sc := subprogramScan{decls: map[dwarf.Offset]subprogramDecl{}}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, &DecodeError{Section: ".debug_info", Msg: err.Error()}
		}
		if e == nil {
			break
		}
		switch e.Tag {
		case dwarf.TagCompileUnit:
			if !sc.unit(d, e) {
				r.SkipChildren()
			}
		case dwarf.TagLabel:
			sc.label(e)
		case dwarf.TagSubprogram:
			sc.subprogram(e)
		}
	}
	subs := sc.resolve()
	sort.Slice(subs, func(i, j int) bool { return subs[i].LowPC < subs[j].LowPC })
	// Each label belongs to the function with the highest entry at or
	// below it.
	for _, l := range sc.labels {
		i := sort.Search(len(subs), func(i int) bool { return subs[i].LowPC > l.Addr }) - 1
		if i >= 0 {
			subs[i].Labels = append(subs[i].Labels, l)
		}
	}
	return subs, nil
}

// A subprogramDecl is what a DW_TAG_subprogram entry says of its
// function, defined there or not.
type subprogramDecl struct {
	name  string
	file  string
	line  int
	typed bool
	art   bool
	noret bool
	ref   dwarf.Offset // DW_AT_specification or DW_AT_abstract_origin
}

// A pendingSubprogram is a definition (an entry with DW_AT_low_pc) before
// its references are followed.
type pendingSubprogram struct {
	sub Subprogram
	ref dwarf.Offset
	has bool // sub has its own DW_AT_decl_line
}

// A subprogramScan collects the subprogram entries and labels of
// .debug_info, in order, with the state of the unit being read.
type subprogramScan struct {
	decls  map[dwarf.Offset]subprogramDecl
	defs   []pendingSubprogram
	labels []Label
	// The current unit's file table, language and whether GCC built it
	// at -O0.
	files []*dwarf.LineFile
	lang  int
	o0    bool
}

// unit starts the compile unit e. It returns false when the unit's
// children are to be skipped.
func (sc *subprogramScan) unit(d *dwarf.Data, e *dwarf.Entry) bool {
	sc.lang, sc.files = 0, nil
	if v, ok := e.Val(dwarf.AttrLanguage).(int64); ok {
		sc.lang = int(v)
	}
	if sc.lang == langGo {
		// Nothing of a Go function's entry is read (Go marks none
		// artificial, and the declarator, labels and locals are C's),
		// and a Go program's runtime and standard library units are
		// most of its DWARF.
		return false
	}
	producer, _ := e.Val(dwarf.AttrProducer).(string)
	sc.o0 = gccO0(producer)
	if lr, err := d.LineReader(e); err == nil && lr != nil {
		sc.files = lr.Files()
	}
	return true
}

// label records the DW_TAG_label e, when it has an address and a
// declaration in the unit's file table.
func (sc *subprogramScan) label(e *dwarf.Entry) {
	low, ok := e.Val(dwarf.AttrLowpc).(uint64)
	line, ok2 := e.Val(dwarf.AttrDeclLine).(int64)
	fidx, ok3 := e.Val(dwarf.AttrDeclFile).(int64)
	if ok && ok2 && ok3 && fidx >= 0 && int(fidx) < len(sc.files) && sc.files[fidx] != nil {
		sc.labels = append(sc.labels, Label{Addr: low, File: filepath.Clean(sc.files[fidx].Name), Line: int(line)})
	}
}

// subprogram records the DW_TAG_subprogram e as a declaration others may
// refer to, and as a definition when it has an entry address.
func (sc *subprogramScan) subprogram(e *dwarf.Entry) {
	var dc subprogramDecl
	dc.name, _ = e.Val(dwarf.AttrName).(string)
	if v, ok := e.Val(dwarf.AttrDeclLine).(int64); ok {
		dc.line = int(v)
	}
	if v, ok := e.Val(dwarf.AttrDeclFile).(int64); ok && v >= 0 && int(v) < len(sc.files) && sc.files[v] != nil {
		dc.file = filepath.Clean(sc.files[v].Name)
	}
	_, dc.typed = e.Val(dwarf.AttrType).(dwarf.Offset)
	dc.art, _ = e.Val(dwarf.AttrArtificial).(bool)
	dc.noret, _ = e.Val(dwarf.AttrNoreturn).(bool)
	for _, a := range []dwarf.Attr{dwarf.AttrSpecification, dwarf.AttrAbstractOrigin} {
		if ref, ok := e.Val(a).(dwarf.Offset); ok {
			dc.ref = ref
		}
	}
	sc.decls[e.Offset] = dc
	low, ok := e.Val(dwarf.AttrLowpc).(uint64)
	if !ok {
		return
	}
	sc.defs = append(sc.defs, pendingSubprogram{
		sub: Subprogram{Name: dc.name, LowPC: low, DeclFile: dc.file, DeclLine: dc.line, Void: !dc.typed, Artificial: dc.art, NoReturn: dc.noret, Lang: sc.lang, GCCO0: sc.o0},
		ref: dc.ref, has: dc.line != 0,
	})
}

// resolve returns the definitions, each completed from the declarations
// it refers to, in the order they were read.
func (sc *subprogramScan) resolve() []Subprogram {
	subs := make([]Subprogram, 0, len(sc.defs))
	for _, p := range sc.defs {
		s := p.sub
		// Follow references (a specification of an abstract origin, at
		// most) for what the definition leaves out.
		for ref, hops := p.ref, 0; ref != 0 && hops < 4; hops++ {
			dc, ok := sc.decls[ref]
			if !ok {
				break
			}
			if s.Name == "" {
				s.Name = dc.name
			}
			if !p.has && dc.line != 0 {
				s.DeclLine, s.DeclFile, p.has = dc.line, dc.file, true
			}
			if dc.typed {
				s.Void = false
			}
			s.Artificial = s.Artificial || dc.art
			s.NoReturn = s.NoReturn || dc.noret
			ref = dc.ref
		}
		subs = append(subs, s)
	}
	return subs
}
