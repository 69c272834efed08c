package output

import "testing"

// TestHistScale: one star per entry while the hottest line fits the bar;
// linear to the hottest line while the coolest still gets its star; a log
// scale for a wide range, where 2,262 and 303,537 no longer look alike.
func TestHistScale(t *testing.T) {
	for _, tc := range []struct {
		min, max uint64
		count    uint64
		want     int
		note     string
	}{
		{1, 30, 30, 30, ""},
		{1, 30, 7, 7, ""},
		{100, 2000, 2000, 30, "histogram: bars scaled to the hottest line (2000 runs = 30 stars)"},
		{100, 2000, 1000, 15, "histogram: bars scaled to the hottest line (2000 runs = 30 stars)"},
		{100, 2000, 100, 2, "histogram: bars scaled to the hottest line (2000 runs = 30 stars)"},
		{1, 303537, 303537, 30, "histogram: bars on a log scale up to the hottest line (303537 runs = 30 stars): each star is about x1.52"},
		{1, 303537, 2262, 18, ""},
		{1, 303537, 10, 5, ""},
		{1, 303537, 1, 1, ""},
		{1, 503, 386, 29, "histogram: bars on a log scale up to the hottest line (503 runs = 30 stars): each star is about x1.23"},
		{1, 503, 2, 3, ""},
	} {
		s := histScale(tc.min, tc.max, 30)
		if got := s.stars(tc.count); got != tc.want {
			t.Errorf("histScale(%d, %d).stars(%d) = %d, want %d", tc.min, tc.max, tc.count, got, tc.want)
		}
		if tc.note != "" || tc.max <= 30 {
			if got := s.note(); got != tc.note {
				t.Errorf("histScale(%d, %d).note() = %q, want %q", tc.min, tc.max, got, tc.note)
			}
		}
	}
}
