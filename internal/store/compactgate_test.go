package store

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weft-crawler/weft/internal/testwait"
)

// TestOpenDoesNotWaitForCompaction reopens a store whose L0 is deep and
// whose log holds writes, as a crawl's after an enqueue burst: replaying
// the log flushes, and the flush picks an L0 compaction. pebble.Open waits
// for every compaction in progress before it returns, so without the gate
// a restart waited for that compaction (seconds, at 10 million URLs)
// before it could read its queues. With it, Open returns before any
// compaction has run, and the compactions then do run.
func TestOpenDoesNotWaitForCompaction(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	raw, err := pebble.Open(dir, &pebble.Options{DisableAutomaticCompactions: true, FormatMajorVersion: pebble.FormatNewest,
		Logger: (*pebbleLogger)(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	for f := range 12 {
		for i := range 200 {
			if err := raw.Set(fmt.Appendf(nil, "k%03d-%05d", i, f), []byte("v"), pebble.NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if f < 11 { // the last round stays in the log, to be replayed
			if err := raw.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if l0 := raw.Metrics().Levels[0].TablesCount; l0 < 8 {
		t.Fatalf("setup: %d tables in L0, want a deep L0", l0)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n := db.pdb.Metrics().Compact.Count; n != 0 {
		t.Errorf("Open returned after %d compactions: it waited for them", n)
	}
	testwait.Eventually(t, time.Minute, "L0 to be compacted once the store is open", func() bool {
		m := db.pdb.Metrics()
		return m.Compact.Count > 0 && m.Levels[0].TablesCount < 4
	})
}
