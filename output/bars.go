package output

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// countCell is the COUNT cell of a line with code that ran count times;
// maxCount is the highest count in the listing (for Scaled).
func (r *report) countCell(count, maxCount uint64) string {
	if count == 0 {
		return "#####"
	}
	n := strconv.FormatUint(count, 10)
	bw := r.opt.barWidth()
	switch r.opt.Style {
	case Histogram:
		return strings.Repeat("*", histScale(r.minCount, maxCount, bw).stars(count)) + " (" + n + ")"
	case Scaled:
		return strings.Repeat("*", scaled(count, maxCount, bw)) + " (" + n + ")"
	}
	return n
}

// scaled returns round(count*width/maxCount), at least 1, computed exactly
// in 128 bits so huge counts neither overflow nor lose precision.
// Preconditions: 0 < count <= maxCount.
func scaled(count, maxCount uint64, width int) int {
	hi, lo := bits.Mul64(count, uint64(width))
	q, rem := bits.Div64(hi, lo, maxCount) // hi < maxCount since count <= maxCount
	if rem >= maxCount-rem {
		q++ // round half up
	}
	return max(int(q), 1)
}

// A barScale is how the Histogram style turns a count into a bar: Bishop's
// one star per entry while the hottest line fits the bar width; else scaled
// to the hottest line, linearly when the smallest nonzero count still gets
// a star of its own, and logarithmically when the range is wider (so 2,262
// and 303,537 do not both fill the bar, and a line run once still shows).
type barScale struct {
	kind     int // scaleExact, scaleLinear or scaleLog
	maxCount uint64
	width    int
}

const (
	scaleExact = iota
	scaleLinear
	scaleLog
)

// histScale is the Histogram scale of a listing whose nonzero counts run
// from minCount to maxCount, for bars of width stars.
func histScale(minCount, maxCount uint64, width int) barScale {
	s := barScale{maxCount: maxCount, width: width}
	switch {
	case maxCount <= uint64(width):
		s.kind = scaleExact
	case minCount > 0 && maxCount/minCount <= uint64(width):
		s.kind = scaleLinear
	default:
		s.kind = scaleLog
	}
	return s
}

// stars is the length of the bar of a count in 1..maxCount.
func (s barScale) stars(count uint64) int {
	switch s.kind {
	case scaleExact:
		return int(count)
	case scaleLinear:
		return scaled(count, s.maxCount, s.width)
	}
	// Log scale: the hottest line fills the bar, a count of 1 gets the one
	// star every nonzero count has.
	n := int(math.Round(float64(s.width) * math.Log(float64(count)) / math.Log(float64(s.maxCount))))
	return min(max(n, 1), s.width)
}

// note says how the bars were scaled, when they do not have one star per
// entry.
func (s barScale) note() string {
	switch s.kind {
	case scaleLinear:
		return fmt.Sprintf("histogram: bars scaled to the hottest line (%d runs = %d stars)", s.maxCount, s.width)
	case scaleLog:
		return fmt.Sprintf("histogram: bars on a log scale up to the hottest line (%d runs = %d stars): each star is about x%.3g",
			s.maxCount, s.width, math.Pow(float64(s.maxCount), 1/float64(s.width)))
	}
	return ""
}
