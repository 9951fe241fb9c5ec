// Package testwait holds Eventually, the one way tests wait for a state
// another goroutine (or process, or server) brings about: by looking at
// the state itself until it holds, never by sleeping a guessed time.
package testwait

import (
	"testing"
	"time"
)

// poll is how often a condition is looked at.
const poll = 10 * time.Millisecond

// Eventually looks at cond every few milliseconds until it holds, and
// fails the test (Fatalf, so call it from the test's goroutine) if it
// still does not after timeout, naming what it waited for. The timeout
// is a bound against a hang, not an assertion about speed: make it
// generous.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	EventuallyNil(t, timeout, what, func() error {
		if cond() {
			return nil
		}
		return errNotYet
	})
}

// EventuallyNil is Eventually for a check that says why it does not hold
// yet: it waits until check returns nil, and on timeout reports what and
// the last error check returned (the state as it was at the end).
func EventuallyNil(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	start := time.Now()
	for {
		err := check()
		if err == nil {
			return
		}
		if waited := time.Since(start); waited >= timeout {
			if err == errNotYet {
				t.Fatalf("waited %v for %s", waited.Round(time.Millisecond), what)
			} else {
				t.Fatalf("waited %v for %s: %v", waited.Round(time.Millisecond), what, err)
			}
			return // a TB whose Fatalf returns
		}
		time.Sleep(poll)
	}
}

type notYet struct{}

func (notYet) Error() string { return "not yet" }

var errNotYet error = notYet{}
