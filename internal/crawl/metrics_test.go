package crawl

import (
	"slices"
	"testing"

	"github.com/weft-crawler/weft/internal/answer"
	"github.com/weft-crawler/weft/internal/fetch"
)

// TestKnownLabels: the label values the API exports at 0 from the start
// are every value the counters can have: each fetch.Kind's name, each
// status class.
func TestKnownLabels(t *testing.T) {
	kinds := errorKinds()
	for k := fetch.KindUnknown; k <= fetch.KindBadURL; k++ {
		if !slices.Contains(kinds, k.String()) {
			t.Errorf("errorKinds %v lacks %s", kinds, k)
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(kinds)))) != len(kinds) {
		t.Errorf("errorKinds %v names a kind twice", kinds)
	}
	classes := statusClasses()
	for code := -1; code < 1000; code++ {
		if c := answer.Class(code); !slices.Contains(classes, c) {
			t.Errorf("status %d: class %s not in statusClasses %v", code, c, classes)
		}
	}
}
