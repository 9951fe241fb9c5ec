package archive

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// weft get --at picks the nearest capture even for a time centuries away,
// where time.Sub saturates.
func TestCloserDoesNotSaturate(t *testing.T) {
	early, late := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	far := time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC)
	if !closer(late, early, far) || closer(early, late, far) {
		t.Error("for a far future time, the later capture is the closer")
	}
	past := time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC)
	if !closer(early, late, past) {
		t.Error("for a far past time, the earlier capture is the closer")
	}
}

// After a kill -9, the WARC file a capture names is still ".open": weft get
// reads it there.
func TestWarcPathFallsBackToOpen(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "warc"), 0o755); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "warc", "a.warc.gz.open")
	if err := os.WriteFile(open, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	a := &Reader{dir: dir}
	if got := a.warcPath("a.warc.gz"); got != open {
		t.Errorf("warcPath = %s, want %s", got, open)
	}
	if got, want := a.warcPath("b.warc.gz"), filepath.Join(dir, "warc", "b.warc.gz"); got != want {
		t.Errorf("warcPath of a missing file = %s, want %s (for its error to name)", got, want)
	}
}
