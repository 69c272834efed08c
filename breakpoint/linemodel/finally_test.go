package linemodel

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The hand-written matchers of finally.go against the regular
// expressions they replace (which compiled one expression per name and ran
// it over every line: minutes on the SQLite amalgamation).
func TestAddressedMatchesRegexp(t *testing.T) {
	lines := []string{
		"p = &x;", "f(&x, &y);", "a & x", "a&x", "&x", "  &x", "(char*)&buf", "(T *) & v;",
		"&p->f", "&p[i]", "&p [i]", "q = &x ;", "if (c && &x) ;", "&&x", "r = a & &x;",
		"s = &x1 + &_y;", "t = &x y", "*&x = 1;", "u = !&x;", "&x-1", "v=&x-1",
	}
	for _, line := range lines {
		for _, name := range []string{"x", "y", "x1", "_y", "buf", "v", "p"} {
			re := regexp.MustCompile(`(^|[(,=?:;{\[!~+\-*/%<>|^]|\*\s*\))\s*&\s*` + regexp.QuoteMeta(name) + `\b(\s*[^\s\[\-\w]|\s*$)`)
			want := re.MatchString(strings.ReplaceAll(line, "&&", "  "))
			got := false
			for _, n := range addressed(line) {
				got = got || n == name
			}
			if got != want && !(line == "if (c && &x) ;" && name == "x") {
				t.Errorf("%q takes the address of %s: got %v, the expression says %v", line, name, got, want)
			}
		}
	}
	// After a logical and, & is unary (the expression missed it).
	if got := addressed("if (c && &x) ;"); len(got) != 1 || got[0] != "x" {
		t.Errorf("addressed(c && &x) = %q, want [x]", got)
	}
}

func TestLabelsAtMatchesRegexp(t *testing.T) {
	lines := []string{"out:", "out :", "out: x = 1;", "x; out:", "{ out: ;", "} out:", "about:", "out::f();",
		"outer:", "case out:", "x = a ? out : b;", "out", "; out :", "}out:"}
	for _, line := range lines {
		re := regexp.MustCompile(`(^|[;{}]\s*)` + regexp.QuoteMeta("out") + `\s*:([^:]|$)`)
		if got, want := labelsAt(line, "out"), re.MatchString(line); got != want {
			t.Errorf("labelsAt(%q, out) = %v, the expression says %v", line, got, want)
		}
	}
}

// TestFindExitJump: the hand-written matcher agrees with exitJump on
// jump statements in every position, and on lines that only look like one.
func TestFindExitJump(t *testing.T) {
	for _, line := range []string{
		"break;", "continue;", "return x;", "return;", "goto out;", "goto  out2 ;",
		"if (x) break;", "if (x) { continue; }", "else return 1;", "} else goto fail;",
		"x = 1; return x;", "breakpoint();", "returns = 0;", "xreturn;", "goto;", "goto ;",
		"elsereturn;", "else\treturn;", "my_else return;", "a; b; goto done;", "(void)0; break",
		"if(a)return", "for(;;)continue;", "", "return", "goto x", "s = \"break\";", "x) goto\tz;",
		"else  break;", "lse break;", "a);  return", "if (a) return b; else break;", "_else return;",
	} {
		want := exitJump.FindStringSubmatch(line)
		if got := findExitJump(line); !slices.Equal(got, want) {
			t.Errorf("findExitJump(%q) = %q, exitJump gives %q", line, got, want)
		}
	}
}

// TestInnermostOf: the table of innermost scopes gives, for every line,
// the scope a scan of all of them would (the last opened of those holding
// the line), over the scopes scopesOf reads from random nestings of
// braces, several on a line and some left open.
func TestInnermostOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		n := 1 + rng.IntN(40)
		src := make([]string, n)
		for l := range src {
			var b strings.Builder
			for k := rng.IntN(4); k > 0; k-- {
				b.WriteString([]string{"{", "}", "x;", "for (;;) {", " "}[rng.IntN(5)])
			}
			src[l] = b.String()
		}
		lo := 1 + rng.IntN(n)
		hi := lo + rng.IntN(n-lo+1)
		all := scopesOf(newSrcText(src), lo, hi)
		innermost := innermostOf(all, lo, hi)
		for l := lo; l <= hi; l++ {
			want := -1
			for k, s := range all {
				if s.open < l && l < s.close && (want < 0 || s.open >= all[want].open) {
					want = k
				}
			}
			if got := innermost(l); got != want {
				t.Fatalf("round %d, lines %q, range %d-%d: innermost(%d) = %d, the scan gives %d (scopes %+v)", round, src, lo, hi, l, got, want, all)
			}
		}
	}
}
