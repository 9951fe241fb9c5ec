package crawl

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-crawler/weft/internal/sketch"
	"github.com/weft-crawler/weft/internal/store"
)

// metaInLinks holds the in-link counts (package sketch, encoded).
const metaInLinks = "inlinks"

// inLinkSave is how often the in-link counts are saved while the crawl
// runs.
const inLinkSave = 5 * time.Minute

// inLinks counts the in-links of every URL, in continuous mode, and keeps
// the counts in the store between runs.
type inLinks struct {
	*sketch.Sketch
	db *store.DB
}

// loadInLinks makes the in-link counter, of size bytes, with the counts an
// earlier run saved in db. Counts that do not decode are dropped with a
// warning: they are an estimate, and the crawl's own state is intact.
func loadInLinks(db *store.DB, size int, log *slog.Logger) (*inLinks, error) {
	in := &inLinks{Sketch: sketch.New(size), db: db}
	b, ok, err := db.GetMeta(metaInLinks)
	if err != nil {
		return nil, fmt.Errorf("crawl: read the in-link counts: %w", err)
	}
	if ok {
		if err := in.UnmarshalBinary(b); err != nil {
			log.Warn("in-link counts of an earlier run dropped", "err", err)
			in.Sketch = sketch.New(size)
		}
	}
	return in, nil
}

// save writes the in-link counts to the store.
func (in *inLinks) save() error {
	v, err := in.MarshalBinary()
	if err != nil {
		return err
	}
	b := in.db.NewBatch()
	b.PutMeta(metaInLinks, v)
	if err := b.Commit(false); err != nil {
		return fmt.Errorf("crawl: save the in-link counts: %w", err)
	}
	return nil
}

// saveInLinks writes the in-link counts to the store; not after a fatal
// error, which may have lost pages whose links were counted (they are
// fetched, and counted, again). It stays the Crawler's for the recrawl
// scan (due.go), which saves them as it goes.
func (c *Crawler) saveInLinks() error {
	if c.inlinks == nil || c.failed.Load() {
		return nil
	}
	return c.inlinks.save()
}
