package output

import (
	"errors"
	"fmt"
	"strings"
)

// A Style is one of Bishop's three ways to print line counts.
type Style int

const (
	// Counts prints each line's count as a number.
	Counts Style = iota
	// Histogram prints a bar of one '*' per entry (Bishop's full
	// histogram) while the hottest line fits the bar width; beyond, bars
	// are scaled to the hottest line, on a log scale when the range is wide.
	Histogram
	// Scaled prints a bar scaled so the highest count fills the bar width.
	Scaled
)

var styleNames = [...]string{Counts: "counts", Histogram: "histogram", Scaled: "scaled"}

// String returns the name ParseStyle accepts for s.
func (s Style) String() string {
	if s >= 0 && int(s) < len(styleNames) {
		return styleNames[s]
	}
	return fmt.Sprintf("Style(%d)", int(s))
}

// ErrUnknownStyle is wrapped by the errors of ParseStyle and of Write when
// the style is not Counts, Histogram or Scaled.
var ErrUnknownStyle = errors.New("unknown print style")

// ParseStyle returns the Style named s: "counts", "histogram" or "scaled".
func ParseStyle(s string) (Style, error) {
	for i, name := range styleNames {
		if s == name {
			return Style(i), nil
		}
	}
	return 0, fmt.Errorf("%w %q: want counts, histogram or scaled", ErrUnknownStyle, s)
}

// A Subst rewrites a source path prefix: a file recorded as From/rest is
// looked for as To/rest.
type Subst struct {
	From, To string
}

// ErrBadSubst is wrapped by the errors of ParseSubst.
var ErrBadSubst = errors.New("bad source path substitution")

// ParseSubst parses "FROM=TO" (split at the first '='). FROM must not be
// empty; TO may be.
func ParseSubst(s string) (Subst, error) {
	from, to, ok := strings.Cut(s, "=")
	if !ok {
		return Subst{}, fmt.Errorf("%w %q: want FROM=TO", ErrBadSubst, s)
	}
	if from == "" {
		return Subst{}, fmt.Errorf("%w %q: FROM is empty", ErrBadSubst, s)
	}
	return Subst{From: from, To: to}, nil
}

// apply returns p rewritten by s and whether s matched. s matches when
// From is p itself or a directory prefix of p.
func (s Subst) apply(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, s.From)
	if !ok || (rest != "" && !strings.HasSuffix(s.From, "/") && rest[0] != '/') {
		return p, false
	}
	return s.To + rest, true
}

// Options control Write.
type Options struct {
	// Style is how line counts are drawn.
	Style Style
	// SourceDirs are extra directories to look for sources in, in order.
	SourceDirs []string
	// Subst are source path rewrites; the first whose From matches wins.
	Subst []Subst
	// Width is the report width the bars are sized for; 0 (or less) means
	// 100.
	Width int
	// ReadFile reads a source file; nil means os.ReadFile.
	ReadFile func(name string) ([]byte, error)
	// Sources, if set, finds and reads the sources, sharing what it read
	// for the line model; nil means one made from Subst, SourceDirs and
	// ReadFile (NewSources).
	Sources *Sources
	// Cwd is the directory file names are shown relative to; "" shows
	// them as recorded (absolute).
	Cwd string
	// Color draws the counts in heat colours with ANSI escape sequences
	// (for a terminal): see the package documentation, "Colour".
	Color bool
	// Fold folds long runs of lines that did not run: see the package
	// documentation, "Folding".
	Fold bool
	// Top, when positive, replaces the listing with the Top hottest lines
	// and cuts the function table to the Top most called functions.
	Top int
	// EngineNotes shows the notes of how the in-process engine and the
	// analysis cache served the run (profile.IsDetailNote) in the
	// listing; they are left out by default, as run detail.
	EngineNotes bool
	// Sort is what the hottest lines (Top) and the function table are
	// sorted by; Heat what the colours measure (the listing's and the
	// HTML page's). KeyAuto sorts by time when the profile has sampled
	// time; Heat's KeyAuto is the count.
	Sort, Heat Key
	// Instances shows each instance of a C++ template apart in the
	// listing, under the summed lines: see the package documentation,
	// "Instances".
	Instances bool
}

const (
	defaultWidth = 100
	minBarWidth  = 10
)

// barWidth is the number of columns a histogram bar may take.
func (o *Options) barWidth() int {
	w := o.Width
	if w <= 0 {
		w = defaultWidth
	}
	return max(w*3/10, minBarWidth)
}

// maxNameColumn is the widest the function-name column is padded to;
// longer names overflow it on their own row only.
func (o *Options) maxNameColumn() int {
	w := o.Width
	if w <= 0 {
		w = defaultWidth
	}
	return max(w*2/5, 8)
}
