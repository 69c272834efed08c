package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeAgrees: README's Go version is go.mod's `go` line, and its
// list of packages for the full test run names every package .ci/run
// installs (issue 14: a user read "Go 1.26" and a test command that hid
// the skips).
func TestReadmeAgrees(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile("../../" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	readme, gomod, ci := read("README.md"), read("go.mod"), read(".ci/run")
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	versions := regexp.MustCompile(`\bGo (1\.\d+(?:\.\d+)?)`).FindAllStringSubmatch(readme, -1)
	if len(versions) == 0 {
		t.Error("README names no Go version")
	}
	for _, v := range versions {
		if v[1] != m[1] {
			t.Errorf("README says Go %s, go.mod's go line is %s", v[1], m[1])
		}
	}
	install := regexp.MustCompile(`(?m)^    apt-get install (.*)$`).FindStringSubmatch(readme)
	if install == nil {
		t.Fatal("README has no `apt-get install` line for the full test run")
	}
	listed := strings.Fields(install[1])
	for _, need := range regexp.MustCompile(`need\+=\(([^)]+)\)`).FindAllStringSubmatch(ci, -1) {
		found := false
		for _, p := range listed {
			found = found || p == need[1]
		}
		if !found {
			t.Errorf(".ci/run installs %s, README's list %q lacks it", need[1], listed)
		}
	}
}
