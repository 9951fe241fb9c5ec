package extract

import (
	"testing"

	"go.uber.org/goleak"
)

// The attribute and word tests start a synthetic web for its pages; it
// must leave no goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
