package freelist

import (
	"runtime"
	"sync"
	"testing"
)

func TestKeepsAtMostItsBoundAcrossCollections(t *testing.T) {
	made := 0
	l := New(2, func() *[]byte { made++; b := make([]byte, 8); return &b })
	a, b, c := l.Get(), l.Get(), l.Get()
	if made != 3 {
		t.Fatalf("made %d, want 3", made)
	}
	l.Put(a)
	l.Put(b)
	l.Put(c) // over the bound: dropped
	if l.Len() != 2 {
		t.Fatalf("kept %d, want 2", l.Len())
	}
	runtime.GC()
	runtime.GC() // a sync.Pool would be empty now
	if got := l.Get(); got != b {
		t.Fatal("Get did not return the value put last (the one likeliest in the CPU's caches)")
	}
	if got := l.Get(); got != a {
		t.Fatal("Get did not return the value put before")
	}
	if l.Get(); made != 4 {
		t.Fatalf("made %d, want 4: a fresh value once the kept ones are out", made)
	}
}

func TestConcurrentUse(t *testing.T) {
	l := New(4, func() *int { return new(int) })
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				v := l.Get()
				*v++
				l.Put(v)
			}
		})
	}
	wg.Wait()
	if l.Len() > 4 {
		t.Fatalf("kept %d, over the bound of 4", l.Len())
	}
}
