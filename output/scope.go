package output

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/patchprof/patchprof/profile"
)

// StartupFuncs are the functions the C toolchain links into every program
// and shared library from its start-up files (crt1.o, crti.o, crtn.o,
// crtbegin.o, crtend.o), which carry no line information of their own.
var StartupFuncs = []string{
	"_init", "_start", "_fini", "frame_dummy", "__do_global_dtors_aux", "__do_global_ctors_aux",
	"register_tm_clones", "deregister_tm_clones", "_dl_relocate_static_pie", "__libc_csu_init", "__libc_csu_fini",
}

// SystemDirs are the directories of the sources a program is compiled
// against but that are not its own: the C and C++ library headers, the
// compilers' own headers, and the Go roots (GoRoots). A third-party library
// the program was built from (vendored, or in a module cache) is not among
// them. Each is a path prefix; one ending in "-" matches versioned
// directories (/usr/lib/llvm-18/...).
var SystemDirs = append([]string{
	"/usr/include/", "/usr/lib/gcc/", "/usr/libexec/gcc/", "/usr/lib/llvm-", "/usr/lib/clang/",
}, GoRoots...)

// GoRoots are the usual Go roots, as the Go toolchain records them in
// DWARF: absolute, or "$GOROOT/" when built with -trimpath.
var GoRoots = []string{"/usr/local/go/", "/usr/lib/go/", "/usr/lib/go-", "/usr/share/go/", "$GOROOT/"}

// A Scope says which code the listing and the exports show; the saved
// profile always keeps everything. The zero Scope shows the user's code:
// no start-up functions without source lines, no sources in SystemDirs.
type Scope struct {
	// AllFuncs keeps the start-up functions (StartupFuncs) that have no
	// source lines, and the functions without source lines that never
	// ran in a module with sources of the user's (a static program's C
	// library).
	AllFuncs bool
	// AllFiles keeps the sources in system directories.
	AllFiles bool
	// SystemDirs replaces the package's SystemDirs when not nil.
	SystemDirs []string
}

// IsSystemSource reports whether file lies in one of dirs (path prefixes as
// in SystemDirs).
func IsSystemSource(file string, dirs []string) bool {
	if file == "" {
		return false
	}
	clean := file
	if !strings.HasPrefix(file, "$") {
		clean = filepath.Clean(file)
	}
	for _, d := range dirs {
		// clean+"/" == d, without making the string: this runs for every
		// line of a profile.
		if strings.HasPrefix(clean, d) || len(d) == len(clean)+1 && d[len(clean)] == '/' && strings.HasPrefix(d, clean) {
			return true
		}
	}
	return false
}

// Apply returns p as s shows it: p itself when nothing is left out, else a
// copy without the start-up functions and the unrun library functions
// (and their blocks), and without the lines, functions, branches, calls and
// dropped rows of system sources, with a note saying what was left out and
// which flag brings it back. The file where a fatal signal struck, and
// the function, are always kept. p is not modified.
//
// An unrun library function is one without source lines (no file) that
// never ran (no call, no block run, no sample), in a module that has a
// function or line in a source of the user's (neither empty nor in a
// system directory): the C library a static program links in has a
// thousand of them, which the same program linked dynamically does not
// show (its C library is a module of its own, counted only with --lib).
// A module without any of the user's sources (built without -g) keeps
// its functions: nothing there tells the user's from a library's.
func (s Scope) Apply(p *profile.Profile) *profile.Profile {
	dirs := s.SystemDirs
	if dirs == nil {
		dirs = SystemDirs
	}
	hidden := func(file string) bool {
		return !s.AllFiles && file != p.Exit.File && IsSystemSource(file, dirs)
	}
	type funcKey struct {
		module string
		addr   profile.Address
	}
	startup := map[funcKey]bool{} // the functions left out: start-up and unrun library ones
	var startupNames []string
	unrun := 0
	if !s.AllFuncs {
		user := userModules(p, dirs)
		for _, f := range p.Functions {
			switch {
			case f.File != "":
			case slices.Contains(StartupFuncs, f.Name):
				startup[funcKey{f.Module, f.Address}] = true
				if !slices.Contains(startupNames, f.Name) {
					startupNames = append(startupNames, f.Name)
				}
			case user[f.Module] && f.Count == 0 && f.BlocksExecuted == 0 && f.Samples == 0 &&
				!(f.Name == p.Exit.Function && f.Module == p.Exit.Module):
				startup[funcKey{f.Module, f.Address}] = true
				unrun++
			}
		}
	}
	files := map[string]bool{}
	for _, l := range p.Lines {
		if hidden(l.File) {
			files[l.File] = true
		}
	}
	for _, f := range p.Functions {
		if hidden(f.File) {
			files[f.File] = true
		}
	}
	if len(startup) == 0 && len(files) == 0 {
		return p
	}
	q := *p
	q.Lines = slices.DeleteFunc(slices.Clone(p.Lines), func(l profile.Line) bool { return files[l.File] })
	q.Functions = slices.DeleteFunc(slices.Clone(p.Functions), func(f profile.Function) bool {
		return files[f.File] || startup[funcKey{f.Module, f.Address}]
	})
	q.Branches = slices.DeleteFunc(slices.Clone(p.Branches), func(b profile.Branch) bool { return files[b.File] })
	q.Calls = slices.DeleteFunc(slices.Clone(p.Calls), func(c profile.Call) bool { return files[c.File] })
	q.Dropped = slices.DeleteFunc(slices.Clone(p.Dropped), func(d profile.Dropped) bool { return files[d.File] })
	blockOf := map[funcKey]bool{}
	q.Blocks = slices.DeleteFunc(slices.Clone(p.Blocks), func(b profile.Block) bool {
		if startup[funcKey{b.Module, b.Function}] {
			blockOf[funcKey{b.Module, b.Address}] = true
			return true
		}
		return false
	})
	q.Edges = slices.DeleteFunc(slices.Clone(p.Edges), func(e profile.Edge) bool { return blockOf[funcKey{e.Module, e.From}] })
	q.Notes = slices.Clone(p.Notes)
	if len(startupNames) > 0 {
		q.Notes = append(q.Notes, fmt.Sprintf("left out: %d C start-up %s without source lines (%s): --all-funcs shows them",
			len(startupNames), plural(len(startupNames), "function"), strings.Join(startupNames, ", ")))
	}
	if unrun > 0 {
		q.Notes = append(q.Notes, fmt.Sprintf("left out: %d %s without source lines that never ran (library code linked in, such as a static C library): --all-funcs shows them",
			unrun, plural(unrun, "function")))
	}
	if len(files) > 0 {
		q.Notes = append(q.Notes, fmt.Sprintf("left out: %d %s in system directories (%s): --all-files shows them",
			len(files), plural(len(files), "source file"), strings.Join(dirsOf(files, dirs), ", ")))
	}
	return &q
}

// userModules returns the modules of p that have a function or a line in
// a source of the user's: named, and in none of the system dirs.
func userModules(p *profile.Profile, dirs []string) map[string]bool {
	user := map[string]bool{}
	mine := func(file string) bool { return file != "" && !IsSystemSource(file, dirs) }
	for _, f := range p.Functions {
		if mine(f.File) {
			user[f.Module] = true
		}
	}
	for _, l := range p.Lines {
		if !user[l.Module] && mine(l.File) {
			user[l.Module] = true
		}
	}
	return user
}

// dirsOf is the system directories (of dirs) that hold the files, in the
// order of dirs, trimmed of their trailing slash.
func dirsOf(files map[string]bool, dirs []string) []string {
	var out []string
	for _, d := range dirs {
		for f := range files {
			if IsSystemSource(f, []string{d}) {
				out = append(out, strings.TrimSuffix(d, "/"))
				break
			}
		}
	}
	return out
}

// plural is noun for n == 1, else noun with an "s".
func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
