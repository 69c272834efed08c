package output

import (
	"math"
	"strings"
)

// SGR parameters (ECMA-48 8.3.117, Select Graphic Rendition) of the
// coloured report.
const (
	sgrBold  = "1"
	sgrDim   = "2"
	sgrCrash = "1;35"    // bold magenta: the crash marker, apart from the heat scale
	sgrNever = "1;37;41" // bold white on red: a line with code that never ran
)

// heatScale is the colour of a count by its heat level, coldest first:
// blue, cyan, green, yellow, bold red.
var heatScale = [...]string{"34", "36", "32", "33", "1;31"}

// heat returns the SGR parameters of a count: sgrNever for 0, else its
// level on heatScale, by the logarithm of count against the highest count
// maxCount (so 1 of 1000 is cold and 1000 of 1000 hot, and a count ten
// times another is visibly hotter).
func heat(count, maxCount uint64) string {
	if count == 0 {
		return sgrNever
	}
	if maxCount <= 1 || count >= maxCount {
		return heatScale[len(heatScale)-1]
	}
	f := math.Log(float64(count)) / math.Log(float64(maxCount))
	return heatScale[min(int(f*float64(len(heatScale))), len(heatScale)-1)]
}

// paint wraps s in the SGR sequence code when the report is coloured.
func (r *report) paint(code, s string) string {
	if !r.opt.Color || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// paintCell paints a padded cell without its padding, so columns stay
// aligned and no line ends in an escape sequence after blanks.
func (r *report) paintCell(code, cell string) string {
	text := strings.TrimSpace(cell)
	if !r.opt.Color || text == "" {
		return cell
	}
	i := strings.Index(cell, text)
	return cell[:i] + r.paint(code, text) + cell[i+len(text):]
}
