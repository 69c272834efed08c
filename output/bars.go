package output

import (
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
		if count <= uint64(bw) {
			return strings.Repeat("*", int(count)) + " (" + n + ")"
		}
		return strings.Repeat("*", bw-1) + "+ (" + n + ")"
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

