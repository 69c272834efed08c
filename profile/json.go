package profile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

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
	Arcs       []Arc       `json:"arcs"`
	Time       *Time       `json:"time"`
	Samples    []Sample    `json:"samples"`
	Stacks     []Stack     `json:"stacks"`
	Instances  []Instance  `json:"instances"`
	Sources    []Source    `json:"sources"`
}

// Decode reads one profile in JSON from r and validates it. It reads r as
// a stream, one list element at a time, so the memory it takes follows the
// profile's content rather than its encoding. Bad JSON, missing required
// fields and values that break the schema give a *FormatError (with an
// empty Path); another format version gives an error wrapping ErrVersion.
// Unknown fields are ignored.
func Decode(r io.Reader) (*Profile, error) {
	return decode(r, "")
}

// decode reads and validates a profile from r; path, if not "", goes into
// the errors.
func decode(r io.Reader, path string) (*Profile, error) {
	p, err := decodeProfile(r, path)
	var fe *FormatError
	if errors.As(err, &fe) {
		fe.Path = path
	}
	return p, err
}

// decodeProfile is decode without the path in a *FormatError: it reads the
// top-level object key by key, checks the required fields and validates
// the result. The version is checked as soon as it is read, before the
// fields after it (Encode writes it first), so that a file from another
// version gets ErrVersion even when the rest of its shape differs; the
// fields of a file that puts the version later wait for it, kept as raw
// JSON.
func decodeProfile(r io.Reader, path string) (*Profile, error) {
	d := json.NewDecoder(bufio.NewReaderSize(r, 1<<16))
	tok, err := d.Token()
	if err == io.EOF {
		return nil, &FormatError{Msg: "empty file"}
	}
	if err != nil {
		return nil, jsonError(err)
	}
	switch tok {
	case json.Delim('{'):
	case nil:
		return nil, &FormatError{Field: "version", Msg: "missing"}
	default:
		return nil, &FormatError{NotProfile: true, Msg: "the document is " + tokenKind(tok) + ", not an object"}
	}
	w := wireDecoder{path: path}
	type rawField struct {
		key string
		raw json.RawMessage
	}
	var early []rawField // the fields before the version
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, jsonError(err)
		}
		key, _ := tok.(string) // a Token in key position is a string
		if !w.version && key != "version" {
			var raw json.RawMessage
			if err := d.Decode(&raw); err != nil {
				return nil, jsonError(err)
			}
			early = append(early, rawField{key, raw})
			continue
		}
		if err := w.field(d, key); err != nil {
			return nil, err
		}
	}
	if _, err := d.Token(); err != nil { // the closing brace
		return nil, jsonError(err)
	}
	end := d.InputOffset()
	if _, err := d.Token(); err != io.EOF {
		return nil, &FormatError{NotProfile: true, Msg: fmt.Sprintf("more data after the profile's end, at offset %d", end)}
	}
	if !w.version {
		return nil, &FormatError{Field: "version", Msg: "missing"}
	}
	for _, f := range early {
		if err := w.field(json.NewDecoder(bytes.NewReader(f.raw)), f.key); err != nil {
			return nil, err
		}
	}
	return w.profile()
}

// A wireDecoder fills a wire from the fields of a profile's top-level
// object, one at a time.
type wireDecoder struct {
	wire
	path    string // for the version error
	version bool   // the version was read, and is one this package reads
}

// field decodes the value of the top-level field key from d.
func (w *wireDecoder) field(d *json.Decoder, key string) error {
	switch key {
	case "lines":
		return decodeList(d, key, &w.Lines)
	case "functions":
		return decodeList(d, key, &w.Functions)
	case "sites":
		return decodeList(d, key, &w.Sites)
	case "dropped":
		return decodeOptional(d, key, &w.Dropped)
	case "modules":
		return decodeOptional(d, key, &w.Modules)
	case "blocks":
		return decodeOptional(d, key, &w.Blocks)
	case "edges":
		return decodeOptional(d, key, &w.Edges)
	case "branches":
		return decodeOptional(d, key, &w.Branches)
	case "calls":
		return decodeOptional(d, key, &w.Calls)
	case "arcs":
		return decodeOptional(d, key, &w.Arcs)
	case "samples":
		return decodeOptional(d, key, &w.Samples)
	case "stacks":
		return decodeOptional(d, key, &w.Stacks)
	case "instances":
		return decodeOptional(d, key, &w.Instances)
	case "sources":
		return decodeOptional(d, key, &w.Sources)
	}
	var raw json.RawMessage
	if err := d.Decode(&raw); err != nil {
		return jsonError(err)
	}
	var v any
	switch key {
	case "version":
		return w.checkVersion(raw)
	case "executable":
		v = &w.Executable
	case "build_id":
		v = &w.BuildID
	case "args":
		v = &w.Args
	case "mode":
		v = &w.Mode
	case "exit":
		v = &w.Exit
	case "notes":
		v = &w.Notes
	case "time":
		v = &w.Time
	default:
		return nil // unknown fields are ignored
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fieldError(err, key, raw)
	}
	return nil
}

// checkVersion reads the version and refuses one this package does not
// read.
func (w *wireDecoder) checkVersion(raw json.RawMessage) error {
	if string(raw) == "null" {
		return &FormatError{Field: "version", Msg: "missing"}
	}
	var v int
	if err := json.Unmarshal(raw, &v); err != nil {
		return &FormatError{Field: "version", Msg: clip(string(raw)) + ": want an integer"}
	}
	if v < oldestVersion || v > Version {
		return versionError(v, w.path)
	}
	w.Version, w.version = &v, true
	return nil
}

// decodeList decodes the list of the field key from d one element at a
// time into *dst; null leaves *dst nil (a required list then is missing).
func decodeList[T any](d *json.Decoder, key string, dst **[]T) error {
	tok, err := d.Token()
	if err != nil {
		return jsonError(err)
	}
	switch tok {
	case nil:
		*dst = nil
		return nil
	case json.Delim('['):
	default:
		// The rest of the value is not read: the error ends the decoding.
		return &FormatError{Field: key, Msg: tokenKind(tok) + ": want a list"}
	}
	list := []T{}
	for i := 0; d.More(); i++ {
		// Each element passes through its raw JSON, which names the field
		// of an address that does not parse (see fieldError).
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return jsonError(err)
		}
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return fieldError(err, key+"["+strconv.Itoa(i)+"]", raw)
		}
		list = append(list, v)
	}
	if _, err := d.Token(); err != nil { // the closing bracket
		return jsonError(err)
	}
	*dst = &list
	return nil
}

// decodeOptional is decodeList for a list that may be missing.
func decodeOptional[T any](d *json.Decoder, key string, dst *[]T) error {
	var list *[]T
	if err := decodeList(d, key, &list); err != nil {
		return err
	}
	*dst = nil
	if list != nil {
		*dst = *list
	}
	return nil
}

// profile checks the required fields of w and returns its validated
// profile.
func (w *wireDecoder) profile() (*Profile, error) {
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
		Arcs:       w.Arcs,
		Time:       w.Time,
		Samples:    w.Samples,
		Stacks:     w.Stacks,
		Instances:  w.Instances,
		Sources:    w.Sources,
	}
	p.normalize()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
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
	if len(p.Arcs) == 0 {
		p.Arcs = nil
	}
	if len(p.Samples) == 0 {
		p.Samples = nil
	}
	if len(p.Stacks) == 0 {
		p.Stacks = nil
	}
	if len(p.Instances) == 0 {
		p.Instances = nil
	}
	if len(p.Sources) == 0 {
		p.Sources = nil
	}
}

// Encode validates p, sorts it (see Sort) and writes it to w as indented
// JSON followed by a newline, the bytes json.MarshalIndent(p, "", "  ")
// would give, one list element at a time: the memory it takes does not
// grow with the encoding's size.
func (p *Profile) Encode(w io.Writer) error {
	if err := p.prepare(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := writeIndented(bw, p); err != nil {
		return err
	}
	return bw.Flush()
}

// prepare upgrades an older version of p in place, validates and sorts
// it, for Encode.
func (p *Profile) prepare() error {
	p.normalize()
	if p.Version >= oldestVersion && p.Version < Version {
		p.Version = Version // an older profile is a newer one without modules or time
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("encode profile: %w", err)
	}
	p.Sort()
	return nil
}

// writeIndented writes p as json.MarshalIndent(p, "", "  ") and a newline,
// field by field in the struct's order and with its tags, and the lists of
// objects element by element, each marshalled compact and indented by
// appendIndented.
func writeIndented(w *bufio.Writer, p *Profile) error {
	v := reflect.ValueOf(p).Elem()
	t := v.Type()
	w.WriteByte('{')
	first := true
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		f := v.Field(i)
		if opts == "omitempty" && isEmpty(f) {
			continue
		}
		if !first {
			w.WriteByte(',')
		}
		first = false
		w.WriteString("\n  ")
		key, _ := json.Marshal(name)
		w.Write(key)
		w.WriteString(": ")
		if f.Kind() != reflect.Slice || f.Len() == 0 || f.Type().Elem().Kind() != reflect.Struct {
			b, err := json.MarshalIndent(f.Interface(), "  ", "  ")
			if err != nil {
				return fmt.Errorf("encode profile: %w", err)
			}
			w.Write(b)
			continue
		}
		w.WriteByte('[')
		var buf []byte
		for j := range f.Len() {
			if j > 0 {
				w.WriteByte(',')
			}
			w.WriteString("\n    ")
			b, err := json.Marshal(f.Index(j).Interface())
			if err != nil {
				return fmt.Errorf("encode profile: %s[%d]: %w", name, j, err)
			}
			buf = appendIndented(buf[:0], b, "    ")
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
		w.WriteString("\n  ]")
	}
	_, err := w.WriteString("\n}\n")
	return err
}

// isEmpty reports whether encoding/json's omitempty leaves f out.
func isEmpty(f reflect.Value) bool {
	switch f.Kind() {
	case reflect.Slice, reflect.Map, reflect.String:
		return f.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return f.IsNil()
	}
	return f.IsZero()
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
