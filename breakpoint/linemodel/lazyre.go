package linemodel

import (
	"regexp"
	"sync"
)

// A lazyRegexp is a regular expression compiled at its first use: the line
// model's expressions cost every patchprof start something, and --version
// and --funcs use none of them.
type lazyRegexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// lazyRE returns the expression expr, to be compiled when first used; it
// panics then if expr does not compile (as regexp.MustCompile).
func lazyRE(expr string) *lazyRegexp { return &lazyRegexp{expr: expr} }

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

func (l *lazyRegexp) MatchString(s string) bool            { return l.get().MatchString(s) }
func (l *lazyRegexp) FindStringSubmatch(s string) []string { return l.get().FindStringSubmatch(s) }
