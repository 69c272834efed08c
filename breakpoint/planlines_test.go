package breakpoint

import "testing"

func TestCaseLabel(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"case 0:", true},
		{"case 'a':", true},
		{"case FOO + 1: {", true},
		{"default:", true},
		{"default: // the rest", true},
		{"case 3: x++;", false}, // a statement on the line: it has a row of its own
		{"return a ? b : c;", false},
		{"again:", false}, // goto labels come from DW_TAG_label
		{"casework = 1;", false},
	} {
		if got := caseLabel.MatchString(tc.line); got != tc.want {
			t.Errorf("caseLabel(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

func TestIsLambda(t *testing.T) {
	for name, want := range map[string]bool{
		"_ZZ4mainENKUliiE_clEii": true,
		"_ZZ4mainENKUliE0_clEi":  true,
		"_ZZ4mainENUlvE_4_FUNEv": true,
		"_ZN6PersonC1ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEi": false,
		"main": false,
	} {
		if got := isLambda(name); got != want {
			t.Errorf("isLambda(%q) = %v, want %v", name, got, want)
		}
	}
}
