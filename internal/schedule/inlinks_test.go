package schedule

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/weft-crawler/weft/internal/seen"
)

// TestInLinksSurviveARestart: the counts saved are the counts a later
// run loads; counts that do not decode are dropped with a warning, and
// the counter starts from nothing rather than fail the crawl.
func TestInLinksSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir)
	quiet := slog.New(slog.DiscardHandler)
	in, err := LoadInLinks(db, 4<<10, quiet)
	if err != nil {
		t.Fatal(err)
	}
	popular, obscure := seen.KeyOf("http://a.test/popular"), seen.KeyOf("http://a.test/obscure")
	for range 7 {
		in.Add(popular)
	}
	in.Add(obscure)
	if err := in.Save(); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db = openStore(t, dir)
	in, err = LoadInLinks(db, 4<<10, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if p, o := in.Count(popular), in.Count(obscure); p != 7 || o != 1 {
		t.Errorf("after a restart: %d and %d in-links, want 7 and 1", p, o)
	}

	b := db.NewBatch()
	b.PutMeta(metaInLinks, []byte("not a sketch"))
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	in, err = LoadInLinks(db, 4<<10, slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatalf("counts that do not decode: %v, want them dropped", err)
	}
	if n := in.Count(popular); n != 0 {
		t.Errorf("counts that do not decode: %d in-links, want none", n)
	}
	if !strings.Contains(logged.String(), "in-link counts of an earlier run dropped") {
		t.Errorf("no warning logged: %q", logged.String())
	}
}
