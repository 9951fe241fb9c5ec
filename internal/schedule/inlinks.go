package schedule

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-crawler/weft/internal/sketch"
	"github.com/weft-crawler/weft/internal/store"
)

// metaInLinks holds the in-link counts (package sketch, encoded).
const metaInLinks = "inlinks"

// SaveInLinks is how often the in-link counts are saved while the crawl
// runs.
const SaveInLinks = 5 * time.Minute

// InLinks counts the in-links of every URL, in continuous mode, and keeps
// the counts in the store between runs.
type InLinks struct {
	*sketch.Sketch
	db *store.DB
}

// LoadInLinks makes the in-link counter, of size bytes, with the counts an
// earlier run saved in db. Counts that do not decode are dropped with a
// warning: they are an estimate, and the crawl's own state is intact.
func LoadInLinks(db *store.DB, size int, log *slog.Logger) (*InLinks, error) {
	in := &InLinks{Sketch: sketch.New(size), db: db}
	b, ok, err := db.GetMeta(metaInLinks)
	if err != nil {
		return nil, fmt.Errorf("schedule: read the in-link counts: %w", err)
	}
	if ok {
		if err := in.UnmarshalBinary(b); err != nil {
			log.Warn("in-link counts of an earlier run dropped", "err", err)
			in.Sketch = sketch.New(size)
		}
	}
	return in, nil
}

// Save writes the in-link counts to the store.
func (in *InLinks) Save() error {
	v, err := in.MarshalBinary()
	if err != nil {
		return err
	}
	b := in.db.NewBatch()
	b.PutMeta(metaInLinks, v)
	if err := b.Commit(false); err != nil {
		return fmt.Errorf("schedule: save the in-link counts: %w", err)
	}
	return nil
}
