package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A Target is the builds of one workload.
type Target struct {
	// Plain is the program as patchprof, callgrind and native runs see it
	// (gcc -g -O0, or go build).
	Plain string
	// Cover is the build with compiled-in counters (gcc --coverage, or
	// go build -cover); CoverEnv names the variable that tells it where
	// to write them (GCOV_PREFIX, GOCOVERDIR) and CoverLabel what it is.
	Cover, CoverEnv, CoverLabel string
	// Pg is the -pg build that uftrace records, or "" when there is none
	// (a Go program); PgNote then says why.
	Pg, PgNote string
	// CoverNote says why there is no Cover build, when there is none.
	CoverNote string
	// Args are the program's arguments: the workload's, and a file its
	// build wrote (Workload.GoPkg).
	Args []string
}

// moduleRoot returns the root of the patchprof repository around the
// working directory, where the sources of the workloads are.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	data, err := os.ReadFile(gomod)
	if err != nil || !bytes.Contains(data, []byte("module github.com/patchprof/patchprof\n")) {
		return "", errors.New("not inside the patchprof repository: run `go run ./cmd/patchprof-bench` from its root")
	}
	return filepath.Dir(gomod), nil
}

// buildPatchprof builds ./cmd/patchprof of the tree into dir, as README.md
// says: static (CGO_ENABLED=0), which starts faster than a binary the
// dynamic linker loads.
func buildPatchprof(root, dir string) (string, error) {
	exe := filepath.Join(dir, "patchprof")
	return exe, command(root, []string{"CGO_ENABLED=0"}, "go", "build", "-o", exe, "./cmd/patchprof")
}

// buildFloor builds ./cmd/patchprof-bench/floor of the tree into dir.
func buildFloor(root, dir string) (string, error) {
	exe := filepath.Join(dir, "floor")
	return exe, command(root, nil, "go", "build", "-o", exe, "./cmd/patchprof-bench/floor")
}

// command runs a build step in dir and returns its output in the error when
// it fails.
func command(dir string, env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// sqliteDir returns the directory of the SQLite amalgamation: the module
// cache's copy of sqliteModule, downloaded through the Go module proxy if it
// is not there yet (as integration/sqlite_test.go does, outside any module
// so that patchprof's go.mod is neither read nor changed).
func sqliteDir(tmp string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", sqliteModule)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, runErr := cmd.Output()
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || runErr != nil || mod.Error != "" {
		return "", fmt.Errorf("go mod download -json %s: %w (%s): the sqlite workload needs the Go module proxy, or leave it out with -workloads",
			sqliteModule, errors.Join(runErr, err), strings.TrimSpace(mod.Error))
	}
	return mod.Dir, nil
}

// buildTarget builds a workload's programs into dir; the -pg build only
// with pg.
func buildTarget(root, dir string, w Workload, pg bool) (*Target, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	t := &Target{
		Plain: filepath.Join(dir, w.Name),
		Cover: filepath.Join(dir, w.Name+"-cover"),
		Args:  w.Args,
	}
	if w.GoPkg != "" {
		return t, buildGoPkg(dir, t, w)
	}
	if w.Generated > 0 {
		src := filepath.Join(dir, w.Name+".c")
		if err := os.WriteFile(src, genFuncs(w.Generated), 0o644); err != nil {
			return nil, err
		}
		w.Sources = []string{src}
	}
	if w.Suite != nil {
		return t, buildSuite(dir, t, w)
	}
	if w.Handler != "" || w.Idle > 0 || w.Pause {
		// A server, the watch's idle processes, or the program an attach
		// stops, runs only under patchprof, attached.
		return t, buildPlain(root, dir, t.Plain, w)
	}
	if w.Go {
		t.CoverEnv, t.CoverLabel = "GOCOVERDIR", "gcov: go build -cover -covermode=atomic"
		t.PgNote = "n/a: no -pg build of Go"
		src := filepath.Join(root, w.Dir)
		var env []string
		if w.CGo {
			// Its own module (go.mod beside it), fetched through the
			// proxy when not in the module cache.
			env = []string{"CGO_ENABLED=1", "CGO_CFLAGS=-g -O0", "GOWORK=off"}
		}
		if err := command(src, env, "go", "build", "-o", t.Plain, "."); err != nil {
			return nil, err
		}
		return t, command(src, env, "go", "build", "-cover", "-covermode=atomic", "-o", t.Cover, ".")
	}
	t.CoverEnv, t.CoverLabel = "GCOV_PREFIX", "gcov: gcc --coverage"
	args := append([]string{"-g", "-O0"}, w.CFlags...)
	for _, s := range w.Sources {
		args = append(args, rooted(root, s))
	}
	if w.SQLite {
		amalg, err := sqliteDir(dir)
		if err != nil {
			return nil, err
		}
		args = append(args, "-I", amalg, filepath.Join(amalg, "sqlite3-binding.c"))
	}
	type build struct {
		out   string
		extra []string
	}
	builds := []build{{t.Plain, nil}, {t.Cover, append([]string{"--coverage"}, w.CoverFlags...)}}
	if pg {
		t.Pg = filepath.Join(dir, w.Name+"-pg")
		builds = append(builds, build{t.Pg, []string{"-pg"}})
	}
	for _, b := range builds {
		a := append(append(append([]string{}, b.extra...), args...), "-o", b.out)
		if err := command(dir, nil, "gcc", a...); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// buildPlain builds a workload's plain program (gcc -g -O0, or go build) as
// exe.
func buildPlain(root, dir, exe string, w Workload) error {
	if w.Go {
		return command(filepath.Join(root, w.Dir), nil, "go", "build", "-o", exe, ".")
	}
	args := append([]string{"-g", "-O0"}, w.CFlags...)
	for _, s := range w.Sources {
		args = append(args, rooted(root, s))
	}
	if w.SQLite {
		amalg, err := sqliteDir(dir)
		if err != nil {
			return err
		}
		args = append(args, "-I", amalg, filepath.Join(amalg, "sqlite3-binding.c"))
	}
	return command(root, nil, "gcc", append(args, "-o", exe)...)
}

// buildGoPkg builds the Go package w.GoPkg (a command of the toolchain,
// from its own sources, with DWARF as go build leaves it) as t.Plain,
// and writes the empty package it compiles beside it. There is no cover
// build of the toolchain.
func buildGoPkg(dir string, t *Target, w Workload) error {
	t.CoverNote = "n/a: no cover build of " + w.GoPkg
	t.PgNote = "n/a: no -pg build of Go"
	t.Cover = ""
	src := filepath.Join(dir, "pkg.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		return err
	}
	t.Args = append(append([]string{}, w.Args...), src)
	return command(dir, nil, "go", "build", "-o", t.Plain, w.GoPkg)
}
