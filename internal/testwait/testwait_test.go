package testwait

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a testing.TB whose Fatalf records the message (and
// returns, which Eventually allows for).
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
}

// TestEventuallyReturnsOnceTrue: a condition that comes to hold ends the
// wait without a failure, and it was looked at until it did.
func TestEventuallyReturnsOnceTrue(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	r := &recorder{TB: t}
	Eventually(r, time.Minute, "the third look", func() bool { return calls.Add(1) >= 3 })
	if r.msg != "" || calls.Load() != 3 {
		t.Errorf("failed with %q after %d looks; want no failure after 3", r.msg, calls.Load())
	}
}

// TestEventuallyNamesWhatOnTimeout: a condition that never holds fails
// the test with what it waited for.
func TestEventuallyNamesWhatOnTimeout(t *testing.T) {
	t.Parallel()
	r := &recorder{TB: t}
	Eventually(r, 30*time.Millisecond, "the sky to fall", func() bool { return false })
	if !strings.Contains(r.msg, "the sky to fall") {
		t.Errorf("timeout reported %q; want it to name the condition", r.msg)
	}
}

// TestEventuallyNilReportsLastError: on timeout the last error the check
// returned is in the failure, beside what.
func TestEventuallyNilReportsLastError(t *testing.T) {
	t.Parallel()
	r := &recorder{TB: t}
	n := 0
	EventuallyNil(r, 30*time.Millisecond, "three nodes", func() error {
		n++
		return fmt.Errorf("%d nodes so far", n)
	})
	if !strings.Contains(r.msg, "three nodes") || !strings.Contains(r.msg, fmt.Sprintf("%d nodes so far", n)) {
		t.Errorf("timeout reported %q; want %q and the last error (%d nodes so far)", r.msg, "three nodes", n)
	}
	r = &recorder{TB: t}
	EventuallyNil(r, time.Minute, "a nil", func() error { return nil })
	if r.msg != "" {
		t.Errorf("a check that holds at once failed: %q", r.msg)
	}
}
