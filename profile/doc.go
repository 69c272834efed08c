// Package profile is patchprof's data model: the counts of one monitored run,
// resolved to source lines and functions, and its saved JSON form.
//
// A Profile is what the monitor hands to the report and what
// `patchprof --save FILE` writes; `patchprof report FILE` reads it back with
// Load. The JSON schema is versioned (Version) and documented field by field
// in docs/profile-format.md. Save writes deterministic output: Sort orders
// lines by file and line, functions and sites by address, so two saves of the
// same counts are byte-for-byte equal.
//
// The package owns the schema, its validation (Validate, and the typed errors
// FormatError and ErrVersion) and the Linux signal-name table used to turn an
// exit into a shell status (Exit.ShellStatus; ShellStatus for an exit code or
// signal number). It does not own how counts are gathered (package monitor) or
// how they are printed (package output). It is pure Go and builds on any OS.
//
// Files:
//
//	profile.go: Version, Profile, Module, Exit, Line, Function, Site,
//	    Dropped; Sort and the module names
//	blocks.go: Block, Edge, Branch and Call (the --blocks model), their
//	    validation, order and merge
//	arcs.go: Arc, the call graph (--calls): its validation, order, merge
//	    and each function's unknown callers (SetUnknownArcs)
//	time.go: Time and Sample (the --time model) and their validation
//	stacks.go: Stack and Frame, the sampled call chains (--time): their
//	    validation, order and merge
//	instances.go: Instance, the line counts of each of the functions that
//	    share their source lines (a C++ template's instances), their
//	    validation, order and merge
//	source.go: Source, the MD5 digests of the sources the line tables
//	    record, and their validation
//	address.go: Address and its hex notation
//	signal.go: the Linux signal names and numbers
//
//	json.go: Decode (a stream, one list element at a time) and Encode
//	indent.go: the saved profile's indentation, in one pass
//	json_errors.go: encoding/json's errors as FormatErrors a user can act on
//	file.go: Save, Load, and ReplaceFile, how patchprof writes every file;
//	    FileKind, the name of a file that is not regular
//	validate.go: Validate, the schema's rules beyond JSON's types
//	errors.go: ErrVersion, ErrNotRegular and FormatError
//	merge.go: Merge, saturating sums of profiles of one executable
//	clone.go: Clone, a deep copy
package profile
