package linemodel

import "testing"

// declLineCases are lines declLine takes or refuses, and lines that
// differ from one only in a byte its pieces meet at.
var declLineCases = []string{
	"int x;", "int x = 1;", "int x, y;", "int x[4];", "int x [4] = {0};", "char *p;", "char **p = 0;",
	"char*p;", "char * p ;", "static int x;", "static const int x = 2;", "const char *s, *t;",
	"unsigned long n;", "unsigned n;", "signed char c;", "struct s v;", "struct s *v = &w;",
	"union u x;", "enum e k = A;", "register int r;", "volatile int v;", "constant x;", "static x;",
	"staticx y;", "static\tint\tx;", "static\vint x;", "int\vx;", "int x\v;", "int\fx;", "int\rx\n;",
	"x = 1;", "return x;", "f(x);", "a b", "a b c;", "a *b", "a*b=c", "_a _b;", "a1 b2;", "1a b;",
	"a 1b;", "a b[", "a b(c);", "a* *b;", "int x[n][m];", "int x]", "static", "static ", "", "*p = 1;",
	"struct struct x;", "const  volatile int x;", "unsigned int const x;", "T * const p = q;",
	"for (int i = 0;", "if (a) b = c;", "foo bar = baz, qux;", "a\tb\t=\tc;", "é x;", "x é;",
}

// TestIsDeclLine: the hand-written match agrees with declLine.
func TestIsDeclLine(t *testing.T) {
	for _, line := range declLineCases {
		if got, want := isDeclLine(line), declLine.MatchString(line); got != want {
			t.Errorf("isDeclLine(%q) = %v, declLine says %v", line, got, want)
		}
	}
}

// FuzzIsDeclLine: the hand-written match agrees with declLine on any
// text.
func FuzzIsDeclLine(f *testing.F) {
	for _, line := range declLineCases {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if got, want := isDeclLine(line), declLine.MatchString(line); got != want {
			t.Errorf("isDeclLine(%q) = %v, declLine says %v", line, got, want)
		}
	})
}
