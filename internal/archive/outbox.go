package archive

import (
	"encoding/base32"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"

	"github.com/weft-crawler/weft/internal/events"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/warc"
)

// eventOf is a capture's page event, with the fields extensions found.
func eventOf(cp Capture) events.Event {
	r := cp.Rec
	return events.Event{
		URL: r.URL, FetchedAt: r.Date.UTC(), Status: r.Status,
		PayloadDigest: "sha1:" + base32.StdEncoding.EncodeToString(r.Digest[:]),
		WARCFile:      r.File, Offset: r.Offset, Length: r.Length,
		Revisit: r.Kind == store.CaptureRevisit, NearDupOf: r.NearDupOf, Title: r.Title, Fields: cp.Fields,
	}
}

// A Writer stores what is fetched and says where each record went: the
// first sink of every capture, whose location the capture index and the
// later sinks name. It is called from many workers at once. *warc.Writer,
// WARC files on local disk, is the one weft has.
type Writer interface {
	WriteExchange(warc.Exchange) (warc.Location, error)
	WriteMetadata(warc.Metadata) (warc.Location, error)
	Files() []string // the files written, oldest first
	Bytes() int64    // bytes written in all
	Close() error
}

var _ Writer = (*warc.Writer)(nil)

// metaOutbox prefixes the events not yet taken by every page sink. An
// event is written there in the batch that makes its capture durable, and
// deleted once every sink has it; events left there by a crash are
// delivered again at the next start. So delivery is at least once: a sink
// may see an event twice, never miss one.
const metaOutbox = "outbox/"

// Outbox carries page events to the sinks through the crawl's store:
// staged in the batch that makes their captures durable, delivered once it
// has committed, dropped from the store once every sink has them. It is
// safe for concurrent use.
type Outbox struct {
	sinks []events.Sink
	db    *store.DB
	log   *slog.Logger
	seq   atomic.Uint64 // the last event's number, for the names in the store
}

// NewOutbox returns the outbox of sinks, over db.
func NewOutbox(sinks []events.Sink, db *store.DB, log *slog.Logger) *Outbox {
	return &Outbox{sinks: sinks, db: db, log: log}
}

// Wanted reports whether events are delivered at all: without sinks they
// are not even made.
func (o *Outbox) Wanted() bool { return len(o.sinks) > 0 }

// Stage writes evs into b and returns their names; nothing without sinks.
func (o *Outbox) Stage(b *store.Batch, evs []events.Event) []string {
	if len(o.sinks) == 0 || len(evs) == 0 {
		return nil
	}
	names := make([]string, len(evs))
	for i, e := range evs {
		names[i] = fmt.Sprintf("%s%020d", metaOutbox, o.seq.Add(1))
		v, err := json.Marshal(e)
		if err != nil {
			// An extension's field that JSON cannot hold (a channel, a
			// NaN): its event goes without the fields.
			e.Fields = map[string]any{"error": "fields not representable in JSON: " + err.Error()}
			v, _ = json.Marshal(e)
		}
		b.PutMeta(names[i], v)
	}
	return names
}

// Deliver hands evs, which Stage put in the store as names, once their
// batch has committed, to every sink, then drops them from the store. An
// error is a sink's: what it feeds would miss captures, so the crawl
// stops, as for a WARC file that cannot be written; the events stay in the
// store for the next start.
func (o *Outbox) Deliver(evs []events.Event, names []string) error {
	for _, s := range o.sinks {
		for _, e := range evs {
			if err := s.Capture(e); err != nil {
				return fmt.Errorf("archive: page sink: %w", err)
			}
		}
	}
	if len(o.sinks) > 0 && len(names) > 0 {
		o.drop(names)
	}
	return nil
}

func (o *Outbox) drop(names []string) {
	b := o.db.NewBatch()
	for _, n := range names {
		b.DeleteMeta(n)
	}
	if err := b.Commit(false); err != nil {
		o.log.Warn("delivered page events not dropped from the outbox; they will be delivered again", "err", err)
	}
}

// Replay delivers the events an earlier run made durable but did not see
// every sink take, oldest first, and numbers the next events after them.
// Without sinks they are kept for a run that has them.
func (o *Outbox) Replay() error {
	var names []string
	var pending []events.Event
	err := o.db.MetaPrefix(metaOutbox, func(seq string, v []byte) bool { // names come without the prefix
		var e events.Event
		if json.Unmarshal(v, &e) == nil {
			names = append(names, metaOutbox+seq)
			pending = append(pending, e)
		}
		if n, err := strconv.ParseUint(seq, 10, 64); err == nil && n > o.seq.Load() {
			o.seq.Store(n)
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("archive: read the page events outbox: %w", err)
	}
	if len(names) == 0 || len(o.sinks) == 0 {
		return nil
	}
	for _, s := range o.sinks {
		for _, e := range pending {
			if err := s.Capture(e); err != nil {
				return fmt.Errorf("archive: page sink, delivering the events of an earlier run: %w", err)
			}
		}
	}
	o.log.Info("page events of an earlier run delivered again", "events", len(pending))
	o.drop(names)
	return nil
}
