package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	Time       *Time       `json:"time"`
	Samples    []Sample    `json:"samples"`
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

// decodeProfile is decode without the path in a *FormatError: it reads the
// version first, then the whole document, checks the required fields and
// validates the result.
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
		Time:       w.Time,
		Samples:    w.Samples,
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
	if len(p.Samples) == 0 {
		p.Samples = nil
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

// marshal is Encode's and Save's common part: it upgrades an older
// version in place, validates and sorts p, and returns its indented JSON
// with a final newline.
func (p *Profile) marshal() ([]byte, error) {
	p.normalize()
	if p.Version >= oldestVersion && p.Version < Version {
		p.Version = Version // an older profile is a newer one without modules or time
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

// clip shortens a value quoted from a bad file to what a one-line message
// can hold.
func clip(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
