package testfill

import (
	"reflect"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type inner struct{ N uint16 }

type sample struct {
	I      int
	F      float64
	B      bool
	S      string
	T      time.Time
	D      time.Duration
	A      [2]byte
	M      map[string]inner
	L      []int64
	P      *inner
	hidden int
}

// TestFillLeavesNoZero: every exported field, nested ones too, is set, and
// an unexported one left alone.
func TestFillLeavesNoZero(t *testing.T) {
	var s sample
	Fill(&s)
	want := sample{I: 1, F: 1, B: true, S: "k", T: At, D: 1, A: [2]byte{1, 1}, M: map[string]inner{"k": {N: 1}}, L: []int64{1}, P: &inner{N: 1}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("filled %+v, want %+v", s, want)
	}
}
