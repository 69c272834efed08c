package lineinfo

import (
	"debug/dwarf"
	"sort"
)

// A Local is one of a function's local variables that lives in its stack
// frame: what GCC's gimplifier needs to know to end its lifetime with a
// clobber (a variable that is no register of GIMPLE's: an aggregate, or
// one whose address is taken, which the frame slot's address in the code
// tells).
type Local struct {
	Name string
	Line int // DW_AT_decl_line, 0 when unknown
	// FrameOffset is the variable's offset from the frame base
	// (DW_OP_fbreg [DWARF5 2.5.1.2]); GCC's frame base is the CFA.
	FrameOffset int64
	// Aggregate is true for a struct, union or array (through typedefs
	// and qualifiers).
	Aggregate bool
}

// readLocals gives each of subs (sorted by LowPC) the local variables its
// DWARF entry holds at a frame offset, in any lexical block.
func readLocals(d *dwarf.Data, subs []Subprogram) error {
	type typeEntry struct {
		tag dwarf.Tag
		ref dwarf.Offset
	}
	types := map[dwarf.Offset]typeEntry{}
	type pending struct {
		sub   int
		local Local
		typ   dwarf.Offset
	}
	var vars []pending
	type open struct{ sub int } // -1: not inside a function with code
	var stack []open
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return &DecodeError{Section: ".debug_info", Msg: err.Error()}
		}
		if e == nil {
			break
		}
		if e.Tag == 0 {
			if n := len(stack); n > 0 {
				stack = stack[:n-1]
			}
			continue
		}
		in := -1
		if n := len(stack); n > 0 {
			in = stack[n-1].sub
		}
		if e.Tag == dwarf.TagCompileUnit {
			// Only C and C++ functions' locals are read (the line
			// model's); a Go program's runtime units are most of its
			// DWARF.
			if lang, _ := e.Val(dwarf.AttrLanguage).(int64); !IsC(int(lang)) {
				r.SkipChildren()
				continue
			}
		}
		switch e.Tag {
		case dwarf.TagStructType, dwarf.TagUnionType, dwarf.TagArrayType, dwarf.TagTypedef,
			dwarf.TagConstType, dwarf.TagVolatileType, dwarf.TagBaseType, dwarf.TagPointerType, dwarf.TagEnumerationType:
			ref, _ := e.Val(dwarf.AttrType).(dwarf.Offset)
			types[e.Offset] = typeEntry{tag: e.Tag, ref: ref}
		case dwarf.TagSubprogram:
			in = -1
			if low, ok := e.Val(dwarf.AttrLowpc).(uint64); ok {
				i := sort.Search(len(subs), func(i int) bool { return subs[i].LowPC >= low })
				if i < len(subs) && subs[i].LowPC == low {
					in = i
				}
			}
		case dwarf.TagVariable:
			if in < 0 {
				break
			}
			loc, ok := e.Val(dwarf.AttrLocation).([]byte)
			off, n := fbreg(loc)
			if !ok || n == 0 || n != len(loc) {
				break
			}
			l := Local{FrameOffset: off}
			l.Name, _ = e.Val(dwarf.AttrName).(string)
			if v, ok := e.Val(dwarf.AttrDeclLine).(int64); ok {
				l.Line = int(v)
			}
			typ, _ := e.Val(dwarf.AttrType).(dwarf.Offset)
			vars = append(vars, pending{sub: in, local: l, typ: typ})
		}
		if e.Children {
			stack = append(stack, open{sub: in})
		}
	}
	for _, v := range vars {
		t := v.typ
		for hops := 0; hops < 16; hops++ {
			te, ok := types[t]
			if !ok {
				break
			}
			switch te.tag {
			case dwarf.TagStructType, dwarf.TagUnionType, dwarf.TagArrayType:
				v.local.Aggregate = true
			case dwarf.TagTypedef, dwarf.TagConstType, dwarf.TagVolatileType:
				t = te.ref
				continue
			}
			break
		}
		subs[v.sub].Locals = append(subs[v.sub].Locals, v.local)
	}
	return nil
}

// fbreg decodes a location that is one DW_OP_fbreg (0x91) and its SLEB128
// offset [DWARF5 7.7.1], returning the offset and the bytes read (0 when
// loc is something else).
func fbreg(loc []byte) (int64, int) {
	if len(loc) < 2 || loc[0] != 0x91 {
		return 0, 0
	}
	var v int64
	var shift uint
	for i := 1; i < len(loc) && i <= 10; i++ {
		b := loc[i]
		v |= int64(b&0x7f) << shift
		shift += 7
		if b&0x80 == 0 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v, i + 1
		}
	}
	return 0, 0
}
