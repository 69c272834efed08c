package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// suiteSource returns the unpacked source of a suite's package, fetched
// with apt-get source into the cache directory integration/projects_test.go
// uses (so either fetches it once for both), and reused.
func suiteSource(s *Suite) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "patchprof-tests", "debsrc", s.Pkg+"_"+s.Version)
	if root, ok := unpackedRoot(dir); ok {
		return root, nil
	}
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	cmd := exec.Command("apt-get", "source", "-qq", s.Pkg+"="+s.Version)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("apt-get source %s=%s: %w (needs dpkg-dev and a deb-src entry, as .ci/run sets up, then apt-get update; or leave the suite out with -workloads)\n%s",
			s.Pkg, s.Version, err, tail(out))
	}
	_ = os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	root, ok := unpackedRoot(dir)
	if !ok {
		return "", fmt.Errorf("apt-get source %s=%s left no unpacked source in %s", s.Pkg, s.Version, dir)
	}
	return root, nil
}

// unpackedRoot is the one directory apt-get source unpacked into dir.
func unpackedRoot(dir string) (string, bool) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", false
	}
	for _, e := range ents {
		if e.IsDir() {
			return filepath.Join(dir, e.Name()), true
		}
	}
	return "", false
}

// buildSuite builds a suite twice into dir, each in its own copy of the
// source: plain (-g and the level) as t.Plain, with --coverage as t.Cover.
// Both are directories, the S of the suite's test script.
func buildSuite(dir string, t *Target, w Workload) error {
	src, err := suiteSource(w.Suite)
	if err != nil {
		return err
	}
	t.CoverEnv, t.CoverLabel = "GCOV_PREFIX", "gcov: gcc --coverage"
	t.PgNote = "n/a: a whole test suite"
	for _, b := range []struct{ tree, flags string }{{t.Plain, "-g " + w.Opt}, {t.Cover, "-g " + w.Opt + " --coverage"}} {
		if err := command(dir, nil, "cp", "-a", src, b.tree); err != nil {
			return err
		}
		env := []string{"CC=gcc", "CXX=g++", "CFLAGS=" + b.flags}
		if err := command(b.tree, env, "sh", "-c", w.Suite.Build); err != nil {
			return fmt.Errorf("building %s (%s): %w", w.Suite.Pkg, b.flags, err)
		}
	}
	return nil
}

// suiteCommand is how a configuration runs a suite's test script in dir:
// native and the tools run the plain tree's, gcov the --coverage tree's.
func (b *bench) suiteCommand(wr *workloadRun, cfg, dir string) (name string, args, env []string) {
	t, w := wr.t, wr.w
	script := []string{"sh", "-c", w.Suite.Test}
	switch cfg {
	case cfgNative:
		return "sh", script[1:], []string{"S=" + t.Plain}
	case cfgGcov:
		return "sh", script[1:], []string{"S=" + t.Cover, t.CoverEnv + "=" + dir}
	case cfgCallgrind:
		return "valgrind", append([]string{"-q", "--tool=callgrind", "--trace-children=yes", "--callgrind-out-file=/dev/null"}, script...),
			[]string{"S=" + t.Plain}
	}
	args = append(engineFlags(cfg), w.Mode...)
	args = append(args, b.opts.PatchprofFlags...)
	args = append(args, "-o", filepath.Join(dir, "report.txt"), "--save", filepath.Join(dir, "profile.json"), "--")
	return b.patchprof, append(args, script...), []string{"S=" + t.Plain, b.cacheEnv(wr, cfg, dir)}
}
