package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
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
	bad := func(field, format string, args ...any) error {
		return &FormatError{Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if p.Executable == "" {
		return bad("executable", "empty")
	}
	switch p.Mode {
	case ModeLines, ModeFuncs, ModeLinesFuncs:
	default:
		return bad("mode", "%q: want %q, %q or %q", p.Mode, ModeLines, ModeFuncs, ModeLinesFuncs)
	}
	if err := p.Exit.validate(); err != nil {
		return err
	}
	modules := map[string]bool{"": true}
	for i, m := range p.Modules {
		field := "modules[" + strconv.Itoa(i) + "]"
		if m.Path == "" {
			return bad(field+".path", "empty")
		}
		if modules[m.Path] || m.Path == p.Executable {
			return bad(field, "%q listed twice", m.Path)
		}
		modules[m.Path] = true
		switch m.Kind {
		case ModuleExecutable, ModuleLibrary:
		default:
			return bad(field+".kind", "%q: want %q or %q", m.Kind, ModuleExecutable, ModuleLibrary)
		}
	}
	module := func(field, m string) error {
		if !modules[m] {
			return bad(field+".module", "%q is not in modules", m)
		}
		return nil
	}
	type fileLine struct {
		module, file string
		line         int
	}
	lines := make(map[fileLine]bool, len(p.Lines))
	for i, l := range p.Lines {
		field := "lines[" + strconv.Itoa(i) + "]"
		if err := module(field, l.Module); err != nil {
			return err
		}
		if l.File == "" {
			return bad(field+".file", "empty")
		}
		if l.Line < 1 {
			return bad(field+".line", "%d: want >= 1", l.Line)
		}
		k := fileLine{l.Module, l.File, l.Line}
		if lines[k] {
			return bad(field, "%q line %d listed twice", l.File, l.Line)
		}
		lines[k] = true
	}
	funcs := make(map[modAddr]bool, len(p.Functions))
	for i, f := range p.Functions {
		field := "functions[" + strconv.Itoa(i) + "]"
		if err := module(field, f.Module); err != nil {
			return err
		}
		if f.Name == "" {
			return bad(field+".name", "empty")
		}
		if f.Line < 0 {
			return bad(field+".line", "%d: want >= 0", f.Line)
		}
		for _, n := range []struct {
			name string
			v    int
		}{{"blocks", f.Blocks}, {"blocks_executed", f.BlocksExecuted}, {"edges", f.Edges}} {
			if n.v < 0 {
				return bad(field+"."+n.name, "%d: want >= 0", n.v)
			}
		}
		if f.BlocksExecuted > f.Blocks {
			return bad(field+".blocks_executed", "%d: more than the function's %d blocks", f.BlocksExecuted, f.Blocks)
		}
		a := f.Address
		if funcs[modAddr{f.Module, a}] {
			return bad(field, "address %s listed twice", f.Address)
		}
		funcs[modAddr{f.Module, a}] = true
	}
	sites := make(map[modAddr]bool, len(p.Sites))
	for i, s := range p.Sites {
		field := "sites[" + strconv.Itoa(i) + "]"
		if err := module(field, s.Module); err != nil {
			return err
		}
		a := s.Address
		if sites[modAddr{s.Module, a}] {
			return bad(field, "address %s listed twice", s.Address)
		}
		sites[modAddr{s.Module, a}] = true
		if !validKind(s.Kind) {
			return bad(field+".kind", "%q: want %q, %q or %q, or a list with %q", s.Kind, KindLine, KindFunc, KindLineFunc, KindBlock)
		}
	}
	for i, d := range p.Dropped {
		field := "dropped[" + strconv.Itoa(i) + "]"
		if err := module(field, d.Module); err != nil {
			return err
		}
		if d.Reason == "" {
			return bad(field+".reason", "empty")
		}
	}
	return p.validateBlocks(modules)
}

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

// clip shortens a value quoted from a bad file to what a one-line message
// can hold.
func clip(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}

func versionError(v int, path string) error {
	in := ""
	if path != "" {
		in = " in " + path
	}
	return fmt.Errorf("%w %d%s: this patchprof reads versions %d to %d", ErrVersion, v, in, oldestVersion, Version)
}

// wire is the JSON shape Decode reads: pointers tell a missing required
// field from an empty one.
type wire struct {
	Version    *int        `json:"version"`
	Executable *string     `json:"executable"`
	BuildID    string      `json:"build_id"`
	Args       *[]string   `json:"args"`
	Mode       *string     `json:"mode"`
	Exit       *Exit       `json:"exit"`
	Lines      *[]Line     `json:"lines"`
	Functions  *[]Function `json:"functions"`
	Sites      *[]Site     `json:"sites"`
	Dropped    []Dropped   `json:"dropped"`
	Notes      []string    `json:"notes"`
	Modules    []Module    `json:"modules"`
	Blocks     []Block     `json:"blocks"`
	Edges      []Edge      `json:"edges"`
	Branches   []Branch    `json:"branches"`
	Calls      []Call      `json:"calls"`
}

// Decode reads one profile in JSON from r and validates it. Bad JSON,
// missing required fields and values that break the schema give a
// *FormatError (with an empty Path); another format version gives an error
// wrapping ErrVersion. Unknown fields are ignored.
func Decode(r io.Reader) (*Profile, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("read profile: %w: more than %d MiB", ErrTooLarge, MaxSize>>20)
	}
	return decode(data, "")
}

// decode parses and validates data; path, if not "", goes into the errors.
func decode(data []byte, path string) (*Profile, error) {
	p, err := decodeProfile(data, path)
	var fe *FormatError
	if errors.As(err, &fe) {
		fe.Path = path
	}
	return p, err
}

func decodeProfile(data []byte, path string) (*Profile, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &FormatError{Msg: "empty file"}
	}
	// The version comes first, on its own, so that a file from another
	// version gets ErrVersion even when the rest of its shape differs.
	var head struct {
		Version json.RawMessage `json:"version"`
	}
	if err := unmarshal(data, &head); err != nil {
		return nil, err
	}
	if head.Version == nil || string(head.Version) == "null" {
		return nil, &FormatError{Field: "version", Msg: "missing"}
	}
	var v int
	if err := json.Unmarshal(head.Version, &v); err != nil {
		return nil, &FormatError{Field: "version", Msg: clip(string(head.Version)) + ": want an integer"}
	}
	if v < oldestVersion || v > Version {
		return nil, versionError(v, path)
	}

	var w wire
	if err := unmarshal(data, &w); err != nil {
		return nil, err
	}
	missing := func(field string) error { return &FormatError{Field: field, Msg: "missing"} }
	switch {
	case w.Executable == nil:
		return nil, missing("executable")
	case w.Args == nil:
		return nil, missing("args")
	case w.Mode == nil:
		return nil, missing("mode")
	case w.Exit == nil:
		return nil, missing("exit")
	case w.Lines == nil:
		return nil, missing("lines")
	case w.Functions == nil:
		return nil, missing("functions")
	case w.Sites == nil:
		return nil, missing("sites")
	}
	p := &Profile{
		Version:    *w.Version,
		Executable: *w.Executable,
		BuildID:    w.BuildID,
		Args:       *w.Args,
		Mode:       *w.Mode,
		Exit:       *w.Exit,
		Lines:      *w.Lines,
		Functions:  *w.Functions,
		Sites:      *w.Sites,
		Dropped:    w.Dropped,
		Notes:      w.Notes,
		Modules:    w.Modules,
		Blocks:     w.Blocks,
		Edges:      w.Edges,
		Branches:   w.Branches,
		Calls:      w.Calls,
	}
	p.normalize()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// unmarshal decodes exactly one JSON value from data into v, turning every
// failure into a *FormatError worded for the user, never in Go's terms
// (encoding/json would say "want struct { Version json.RawMessage ... }").
func unmarshal(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	if err := d.Decode(v); err != nil {
		return jsonError(err, data)
	}
	end := d.InputOffset()
	if _, err := d.Token(); err != io.EOF {
		return &FormatError{NotProfile: true, Msg: fmt.Sprintf("more data after the profile's end, at offset %d", end)}
	}
	return nil
}

// jsonError translates an encoding/json error on data.
func jsonError(err error, data []byte) *FormatError {
	var (
		te *json.UnmarshalTypeError
		se *json.SyntaxError
		ae *AddressError
	)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return &FormatError{Msg: "truncated: the JSON ends before the profile does", Err: io.ErrUnexpectedEOF}
	case errors.As(err, &ae):
		return &FormatError{Field: addressField(data, ae.Text), Err: ae}
	case errors.As(err, &se):
		return &FormatError{NotProfile: true, Msg: fmt.Sprintf("not JSON at offset %d: %s", se.Offset, se.Error())}
	case errors.As(err, &te):
		have := jsonValue(te.Value)
		if te.Field == "" {
			return &FormatError{NotProfile: true, Msg: "the document is " + have + ", not an object"}
		}
		return &FormatError{Field: te.Field, Msg: have + ": want " + jsonType(te.Type)}
	}
	return &FormatError{NotProfile: true, Msg: "cannot decode the JSON", Err: err}
}

// jsonValue words the Value of a json.UnmarshalTypeError ("array",
// "number -1") for a message.
func jsonValue(v string) string {
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return n
	}
	switch v {
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "number":
		return "a number"
	}
	return v
}

// jsonType words the JSON a Go type of the schema wants.
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[Address]() {
		return `an address, a string such as "0x401136"`
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer from 0 to 2^64-1"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another type"
}

// addressField returns the name of the first address field of data
// ("functions[3].address") whose text is text, "" if none is. encoding/json
// stops at an Address that does not parse without saying where; this second
// look, taken only on that failure, names the field the way Validate names
// the others.
func addressField(data []byte, text string) string {
	type addr struct {
		Address  *string `json:"address"`
		End      *string `json:"end"`
		Function *string `json:"function"`
		From     *string `json:"from"`
		To       *string `json:"to"`
		Target   *string `json:"target"`
	}
	var doc struct {
		Exit struct {
			FaultAddress *string `json:"fault_address"`
			PC           *string `json:"pc"`
		} `json:"exit"`
		Functions, Sites, Dropped, Blocks, Edges, Branches, Calls []addr
	}
	// Type errors elsewhere do not matter here: Unmarshal fills in what it
	// can, and the address in question is a string (it reached
	// UnmarshalText).
	_ = json.Unmarshal(data, &doc)
	is := func(s *string) bool { return s != nil && *s == text }
	switch {
	case is(doc.Exit.FaultAddress):
		return "exit.fault_address"
	case is(doc.Exit.PC):
		return "exit.pc"
	}
	for _, list := range []struct {
		name  string
		items []addr
	}{{"functions", doc.Functions}, {"sites", doc.Sites}, {"dropped", doc.Dropped}, {"blocks", doc.Blocks},
		{"edges", doc.Edges}, {"branches", doc.Branches}, {"calls", doc.Calls}} {
		for i, it := range list.items {
			for _, f := range []struct {
				name string
				s    *string
			}{{"address", it.Address}, {"end", it.End}, {"function", it.Function}, {"from", it.From}, {"to", it.To}, {"target", it.Target}} {
				if is(f.s) {
					return list.name + "[" + strconv.Itoa(i) + "]." + f.name
				}
			}
		}
	}
	return ""
}

// normalize gives the slices their canonical emptiness: required lists are
// non-nil (they encode as []), optional ones nil when empty (omitted).
func (p *Profile) normalize() {
	if p.Args == nil {
		p.Args = []string{}
	}
	if p.Lines == nil {
		p.Lines = []Line{}
	}
	if p.Functions == nil {
		p.Functions = []Function{}
	}
	if p.Sites == nil {
		p.Sites = []Site{}
	}
	if len(p.Dropped) == 0 {
		p.Dropped = nil
	}
	if len(p.Notes) == 0 {
		p.Notes = nil
	}
	if len(p.Modules) == 0 {
		p.Modules = nil
	}
	if len(p.Blocks) == 0 {
		p.Blocks = nil
	}
	if len(p.Edges) == 0 {
		p.Edges = nil
	}
	if len(p.Branches) == 0 {
		p.Branches = nil
	}
	if len(p.Calls) == 0 {
		p.Calls = nil
	}
}

// Encode validates p, sorts it (see Sort) and writes it to w as indented
// JSON followed by a newline.
func (p *Profile) Encode(w io.Writer) error {
	data, err := p.marshal()
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

func (p *Profile) marshal() ([]byte, error) {
	p.normalize()
	if p.Version >= oldestVersion && p.Version < Version {
		p.Version = Version // a version-1 profile is a version-2 profile without modules
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("encode profile: %w", err)
	}
	p.Sort()
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode profile: %w", err)
	}
	return append(data, '\n'), nil
}

// Save validates and sorts p and writes it to path as indented JSON. The
// write is atomic: the profile goes to a temporary file in the same
// directory, which is then renamed over path, so a reader never sees half a
// profile and an old file at path survives a failed save.
func (p *Profile) Save(path string) (err error) {
	data, err := p.marshal()
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
				err = errors.Join(err, rerr)
			}
		}
	}()
	if _, err := f.Write(data); err != nil {
		return errors.Join(fmt.Errorf("save %s: %w", path, err), f.Close())
	}
	// CreateTemp makes the file 0600; a profile is an ordinary document.
	if err := f.Chmod(0o644); err != nil {
		return errors.Join(fmt.Errorf("save %s: %w", path, err), f.Close())
	}
	if err := f.Sync(); err != nil {
		return errors.Join(fmt.Errorf("save %s: %w", path, err), f.Close())
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return nil
}

// Load reads and validates the profile saved at path. Errors: the
// *os.PathError of a file that cannot be read; an error wrapping
// ErrNotRegular for a directory, FIFO or device, and ErrTooLarge for a file
// of more than MaxSize bytes; a *FormatError (with Path set) for bad JSON,
// a missing required field or a value that breaks the schema; an error
// wrapping ErrVersion, naming both versions, for a profile of another
// format version.
func Load(path string) (*Profile, error) {
	data, err := readRegular(path)
	if err != nil {
		return nil, err
	}
	return decode(data, path)
}

// readRegular reads the regular file at path, of at most MaxSize bytes.
func readRegular(path string) (data []byte, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("load profile: %w", err)
	}
	if err := checkRegular(path, fi); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load profile: %w", err)
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	// The file opened may not be the one Stat saw (replaced in between).
	if fi, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("load profile: %w", err)
	}
	if err := checkRegular(path, fi); err != nil {
		return nil, err
	}
	if fi.Size() > MaxSize {
		return nil, tooLarge(path, fi.Size())
	}
	data, err = io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("load profile: %w", err)
	}
	if len(data) > MaxSize {
		return nil, tooLarge(path, int64(len(data)))
	}
	return data, nil
}

func tooLarge(path string, size int64) error {
	return fmt.Errorf("%s: %w: %d MiB or more, and profiles are at most %d MiB: is it a profile saved with --save?",
		path, ErrTooLarge, size>>20, MaxSize>>20)
}

// checkRegular refuses anything but a regular file, naming what it is.
func checkRegular(path string, fi os.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "a special file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&os.ModeNamedPipe != 0:
		what = "a FIFO"
	case m&os.ModeCharDevice != 0:
		what = "a character device"
	case m&os.ModeDevice != 0:
		what = "a block device"
	case m&os.ModeSocket != 0:
		what = "a socket"
	}
	return fmt.Errorf("%s is %s, %w: give the path of a profile saved with --save", path, what, ErrNotRegular)
}
