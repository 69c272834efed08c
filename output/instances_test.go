package output

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"

	"github.com/patchprof/patchprof/profile"
)

// templateSource is a function template used with int (7 calls) and
// double (3 calls), as integration/testdata/templates.cpp has it.
const templateSource = `template <typename T>
T biggest(T a, T b)
{
	if (a < b)
		return b;
	return a;
}

int main()
{
	return biggest(1, 2) + (int)biggest(1.0, 2.0);
}
`

// templateProfile is a --blocks profile of templateSource: the summed
// lines, each instance's own, and the if's branch in each instance.
func templateProfile() *profile.Profile {
	const src = dir + "/t.cpp"
	inst := func(name string, addr profile.Address, n, taken uint64) profile.Instance {
		return profile.Instance{Function: name, Address: addr, File: src, Line: 2, EndLine: 7,
			Lines: []profile.InstanceLine{{Line: 2, Count: n}, {Line: 4, Count: n}, {Line: 5, Count: taken}, {Line: 6, Count: n - taken}}}
	}
	return &profile.Profile{
		Version: profile.Version, Executable: dir + "/t", Args: []string{"./t"}, Mode: profile.ModeLinesFuncs,
		Exit: profile.Exit{Code: intp(0)},
		Lines: []profile.Line{
			{File: src, Line: 2, Count: 10}, {File: src, Line: 4, Count: 10}, {File: src, Line: 5, Count: 5},
			{File: src, Line: 6, Count: 5}, {File: src, Line: 9, Count: 1}, {File: src, Line: 11, Count: 1},
		},
		Functions: []profile.Function{
			{Name: "main", Count: 1, File: src, Line: 9, Address: 0x1139, Blocks: 1, BlocksExecuted: 1, Returns: 1},
			{Name: "_Z7biggestIiET_S0_S0_", Count: 7, File: src, Line: 2, Address: 0x1290, Blocks: 4, BlocksExecuted: 4, Returns: 7},
			{Name: "_Z7biggestIdET_S0_S0_", Count: 3, File: src, Line: 2, Address: 0x12ac, Blocks: 4, BlocksExecuted: 4, Returns: 3},
		},
		Branches: []profile.Branch{
			{File: src, Line: 4, Address: 0x12a0, Taken: 4, NotTaken: 3},
			{File: src, Line: 4, Address: 0x12c4, Taken: 1, NotTaken: 2},
		},
		Instances: []profile.Instance{
			inst("_Z7biggestIiET_S0_S0_", 0x1290, 7, 3),
			inst("_Z7biggestIdET_S0_S0_", 0x12ac, 3, 2),
		},
	}
}

// templateReadFile serves templateSource as dir/t.cpp.
func templateReadFile(name string) ([]byte, error) {
	if name == dir+"/t.cpp" {
		return []byte(templateSource), nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// TestInstancesListing: with --instances the listing shows each instance
// under the summed lines, with its own branches; without, a note says
// what is summed.
func TestInstancesListing(t *testing.T) {
	for _, on := range []bool{true, false} {
		var buf bytes.Buffer
		opt := Options{Cwd: dir, ReadFile: templateReadFile, Instances: on}
		if err := Write(&buf, templateProfile(), opt); err != nil {
			t.Fatal(err)
		}
		name := "instances/listing.golden"
		if !on {
			name = "instances/listing_summed.golden"
		}
		checkGolden(t, name, buf.String())
	}
}

// TestInstancesGcov: the .gcov text shows the group as gcov -b -c does.
func TestInstancesGcov(t *testing.T) {
	checkGolden(t, "instances/gcov.golden", gcovFiles(t, templateProfile(), templateReadFile))
}

// TestInstancesGcovJSON: the JSON has each instance's lines, named after
// it, in place of the summed ones.
func TestInstancesGcovJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteGcovJSON(&buf, templateProfile(), GcovJSONOptions{Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "instances/gcovjson.golden", gunzipJSON(t, buf.Bytes()))
}

// TestInstancesLCOV: each instance has its FN and FNDA, and DA the sum.
func TestInstancesLCOV(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteLCOV(&buf, templateProfile()); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{"FN:2,_Z7biggestIdET_S0_S0_\n", "FN:2,_Z7biggestIiET_S0_S0_\n",
		"FNDA:3,_Z7biggestIdET_S0_S0_\n", "FNDA:7,_Z7biggestIiET_S0_S0_\n", "DA:4,10\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("tracefile lacks %q:\n%s", want, text)
		}
	}
	if strings.Count(text, "\nDA:4,") != 1 {
		t.Errorf("line 4 has more than one DA:\n%s", text)
	}
}

// TestInstanceGroups: an entry line with one instance makes no group,
// and a group's instances come highest address first.
func TestInstanceGroups(t *testing.T) {
	p := templateProfile()
	lone := profile.Instance{Function: "_Z4lonev", Address: 0x2000, File: dir + "/t.cpp", Line: 9, EndLine: 9,
		Lines: []profile.InstanceLine{{Line: 9, Count: 1}}}
	gs := instanceGroups(append(p.Instances, lone))
	if len(gs) != 1 || gs[0].line != 2 || gs[0].end != 7 {
		t.Fatalf("groups: %+v", gs)
	}
	if gs[0].insts[0].Address != 0x12ac {
		t.Errorf("first instance %s, want the highest address", gs[0].insts[0].Function)
	}
	if k := gs[0].owner(4, 0x12c4); k != 0 {
		t.Errorf("owner of 0x12c4: %d, want the double instance", k)
	}
	if k := gs[0].owner(4, 0x1000); k != -1 {
		t.Errorf("owner of an address below the instances: %d", k)
	}
}
