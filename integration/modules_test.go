//go:build linux

package integration

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildSolib builds the solib target into a directory of its own: main,
// linked against libgreet.so (found through its rpath), and libplug.so,
// which main loads with dlopen. It returns the directory.
func buildSolib(t *testing.T, flags ...string) string {
	t.Helper()
	mustHaveCC(t)
	dir := t.TempDir()
	src := filepath.Join(testdataDir, "solib")
	for _, args := range [][]string{
		append(append([]string{}, flags...), "-shared", "-fPIC", "-o", "libgreet.so", filepath.Join(src, "greet.c")),
		append(append([]string{}, flags...), "-shared", "-fPIC", "-o", "libplug.so", filepath.Join(src, "plug.c")),
		append(append([]string{}, flags...), "-o", "main", filepath.Join(src, "main.c"), "-L.", "-lgreet", "-Wl,-rpath,$ORIGIN", "-ldl"),
	} {
		cmd := exec.Command("gcc", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return dir
}

// moduleKinds maps the base name of each module of p to its kind.
func moduleKinds(p *profile) map[string]string {
	out := map[string]string{}
	for _, m := range p.Modules {
		out[filepath.Base(m.Path)] = m.Kind
	}
	return out
}

// funcIn is the count of function name in module (a base name; "" is the
// executable).
func funcIn(p *profile, module, name string) (int64, bool) {
	for _, f := range p.Functions {
		if f.Name == name && filepath.Base(f.Module) == filepath.Base(module) && (module == "") == (f.Module == "") {
			return f.Count, true
		}
	}
	return 0, false
}

const solibOutput = "greet 44850 plugin 40000 2500\n"

// TestSharedLibraries profiles a program, the library it is linked with and
// a library it loads with dlopen, unloads, and loads again: greet runs 300
// times, plug 200 + 50 times (one image, counted over both loads), and
// plug_calls twice. The C runtime is not profiled.
func TestSharedLibraries(t *testing.T) {
	needs(t)
	t.Parallel()
	dir := buildSolib(t, "-g", "-O0")
	exe := filepath.Join(dir, "main")
	t.Run("funcs", func(t *testing.T) {
		res, p := runProfile(t, runOpts{args: []string{"--funcs", exe, dir}})
		wantExitCode(t, res, p, 0)
		if res.stdout != solibOutput {
			t.Errorf("target's stdout %q, want %q", res.stdout, solibOutput)
		}
		kinds := moduleKinds(p)
		if kinds["libgreet.so"] != "library" || kinds["libplug.so"] != "library" || len(kinds) != 2 {
			t.Errorf("modules %v, want exactly libgreet.so and libplug.so as libraries", p.Modules)
		}
		for _, c := range []struct {
			module, name string
			want         int64
		}{{"", "main", 1}, {"libgreet.so", "greet", 300}, {"libplug.so", "plug", 250}, {"libplug.so", "plug_calls", 2}} {
			got, ok := funcIn(p, c.module, c.name)
			if !ok || got != c.want {
				t.Errorf("%s in %q: count %d (found %v), want %d", c.name, c.module, got, ok, c.want)
			}
		}
		if !strings.Contains(res.stdout+res.stderr, "libplug.so") {
			t.Errorf("the report does not name libplug.so:\n%s", res)
		}
	})
	t.Run("lines", func(t *testing.T) {
		res, p := runProfile(t, runOpts{args: []string{"--lines", exe, dir}})
		wantExitCode(t, res, p, 0)
		wantLine(t, p, "greet.c", markerLineIn(t, filepath.Join(testdataDir, "solib", "greet.c"), "GREET_BODY"), 300)
		wantLine(t, p, "plug.c", markerLineIn(t, filepath.Join(testdataDir, "solib", "plug.c"), "PLUG_BODY"), 250)
		for _, l := range p.Lines {
			if filepath.Base(l.File) == "greet.c" && filepath.Base(l.Module) != "libgreet.so" {
				t.Errorf("greet.c:%d is reported under module %q, want libgreet.so", l.Line, l.Module)
			}
		}
	})
	t.Run("lib-restricts", func(t *testing.T) {
		res, p := runProfile(t, runOpts{args: []string{"--funcs", "--lib", "libgreet*", exe, dir}})
		wantExitCode(t, res, p, 0)
		if res.stdout != solibOutput {
			t.Errorf("target's stdout %q, want %q", res.stdout, solibOutput)
		}
		if kinds := moduleKinds(p); len(kinds) != 1 || kinds["libgreet.so"] != "library" {
			t.Errorf("modules %v, want only libgreet.so", p.Modules)
		}
		if got, ok := funcIn(p, "libgreet.so", "greet"); !ok || got != 300 {
			t.Errorf("greet: %d (found %v), want 300", got, ok)
		}
	})
	t.Run("lib-adds-system", func(t *testing.T) {
		// libc has no line information on Debian, but its exported
		// functions are in .dynsym: asked for by name, it is profiled.
		res, p := runProfile(t, runOpts{args: []string{"--funcs", "--func", "^(printf|dlopen|greet)$", "--lib", "libc.so*", "--lib", "libgreet.so", exe, dir}})
		wantExitCode(t, res, p, 0)
		if got, ok := funcIn(p, "libc.so.6", "printf"); !ok || got != 1 {
			t.Errorf("printf in libc: %d (found %v), want 1", got, ok)
		}
		if got, ok := funcIn(p, "libc.so.6", "dlopen"); !ok || got != 2 {
			t.Errorf("dlopen in libc: %d (found %v), want 2", got, ok)
		}
	})
}

// TestPipeline profiles both programs of a shell pipeline started through
// sh, a system program without symbols that is run as a launcher: one
// section per executable.
func TestPipeline(t *testing.T) {
	needs(t)
	t.Parallel()
	dir := t.TempDir()
	for _, prog := range []string{"produce", "consume"} {
		exe := buildC(t, prog+".c", "-g", "-O0")
		if out, err := exec.Command("cp", exe, filepath.Join(dir, prog)).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v\n%s", err, out)
		}
	}
	for _, mode := range []string{"--funcs", "--lines"} {
		res, p := runProfile(t, runOpts{args: []string{mode, "--", "sh", "-c", "./produce | ./consume"}, dir: dir})
		wantExitCode(t, res, p, 0)
		if res.stdout != "count 1000 sum 499500\n" {
			t.Errorf("%s: target's stdout %q, want the pipeline's", res.cmdline, res.stdout)
		}
		kinds := moduleKinds(p)
		if kinds["produce"] != "executable" || kinds["consume"] != "executable" || len(kinds) != 2 {
			t.Errorf("%s: modules %v, want produce and consume as executables", res.cmdline, p.Modules)
		}
		if mode == "--funcs" {
			for _, c := range []struct {
				module, name string
				want         int64
			}{{"produce", "emit", 1000}, {"consume", "take", 1000}, {"produce", "main", 1}, {"consume", "main", 1}} {
				if got, ok := funcIn(p, c.module, c.name); !ok || got != c.want {
					t.Errorf("%s in %s: %d (found %v), want %d", c.name, c.module, got, ok, c.want)
				}
			}
		} else {
			wantLine(t, p, "produce.c", markerLine(t, "produce.c", "EMIT_BODY"), 1000)
			wantLine(t, p, "consume.c", markerLine(t, "consume.c", "TAKE_BODY"), 1000)
		}
	}
	t.Run("no-follow", func(t *testing.T) {
		// Only sh would be profiled, and it has nothing to count.
		res := run(t, runOpts{args: []string{"--funcs", "--no-follow", "--", "sh", "-c", "./produce | ./consume"}, dir: dir})
		if res.code == 0 || strings.Count(strings.TrimSpace(res.stderr), "\n") != 0 || !strings.Contains(res.stderr, "no function symbols") {
			t.Errorf("want a one-line error about sh's symbols:\n%s", res)
		}
	})
}
