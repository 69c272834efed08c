package profiler

import "testing"

// TestBaseObjectName: a constructor's or destructor's complete-object
// symbol gives way to its base-object alias, the name gcov uses.
func TestBaseObjectName(t *testing.T) {
	for _, tc := range []struct {
		name    string
		aliases []string
		want    string
	}{
		{"_ZN3BoxIiEC1Ei", []string{"_ZN3BoxIiEC2Ei"}, "_ZN3BoxIiEC2Ei"},
		{"_ZN3BoxIiED1Ev", []string{"_ZN3BoxIiED2Ev"}, "_ZN3BoxIiED2Ev"},
		{"_ZN3BoxIiEC1Ei", nil, "_ZN3BoxIiEC1Ei"},
		{"_Z5twiceIiET_S0_", []string{"_Z5twiceIiET_S1_"}, "_Z5twiceIiET_S0_"}, // no constructor
		{"_ZN1AC1Ev", []string{"_ZN1BC2Ev"}, "_ZN1AC1Ev"},                      // two bytes differ
	} {
		if got := baseObjectName(tc.name, tc.aliases); got != tc.want {
			t.Errorf("baseObjectName(%q, %q) = %q, want %q", tc.name, tc.aliases, got, tc.want)
		}
	}
}
