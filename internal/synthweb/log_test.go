package synthweb

import (
	"fmt"
	"slices"
	"testing"
)

// TestFirstTries drops what a crawl asks again after a server error or
// no answer, and keeps every other repeat.
func TestFirstTries(t *testing.T) {
	req := func(path string, status int) Request {
		return Request{Addr: "127.0.0.1:80", Path: path, Status: status}
	}
	log := []Request{
		req("/a", 500), req("/b", 200), req("/a", 500), req("/a", 200), // tried once more, then a duplicate
		req("/b", 200),                               // a duplicate
		req("/c", 0), req("/c", 200), req("/c", 200), // no answer, then an answer, then a duplicate
		req("/d", 404), req("/d", 404), // a duplicate of a 404
	}
	var got []string
	for _, r := range FirstTries(log) {
		got = append(got, fmt.Sprintf("%s %d", r.Path, r.Status))
	}
	want := []string{"/a 500", "/b 200", "/a 200", "/b 200", "/c 0", "/c 200", "/d 404", "/d 404"}
	if !slices.Equal(got, want) {
		t.Errorf("FirstTries = %v, want %v", got, want)
	}
}
