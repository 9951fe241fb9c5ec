package crawl

import (
	"strings"
	"testing"
)

// TestStateOfAnotherFormatIsRefused opens a state without the format this
// build writes (an older weft's, whose URLs wait in per-host queues the
// frontier never reads): it must be refused by name, not resumed with its
// queue silently ignored.
func TestStateOfAnotherFormatIsRefused(t *testing.T) {
	dir := t.TempDir()
	d, _, err := openDurable(dir, 4, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := d.db.NewBatch()
	b.PutMeta(metaFormat, []byte("1"))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	d.close()
	_, _, err = openDurable(dir, 4, false, nil)
	if err == nil || !strings.Contains(err.Error(), "--fresh") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("reopen: %v, want a refusal naming the directory and --fresh", err)
	}
	d, found, err := openDurable(dir, 4, true, nil)
	if err != nil || found {
		t.Fatalf("--fresh over it: found=%v err=%v", found, err)
	}
	d.close()
}
