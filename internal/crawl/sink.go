package crawl

import (
	"encoding/base32"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"weft/internal/store"
	"weft/internal/warc"
)

// Event is one archived capture, as a page sink receives it once the
// capture is in the crawl's durable state.
type Event struct {
	URL           string    `json:"url"`
	FetchedAt     time.Time `json:"fetched_at"`
	Status        int       `json:"status"`
	PayloadDigest string    `json:"payload_digest"` // "sha1:" and base32, as in WARC
	WARCFile      string    `json:"warc_file"`
	Offset        int64     `json:"offset"`
	Length        int64     `json:"length"`
	Revisit       bool      `json:"revisit,omitempty"`     // the payload is in an earlier capture's record
	NearDupOf     string    `json:"near_dup_of,omitempty"` // a page this one nearly copies
}

func eventOf(r store.CaptureRecord) Event {
	return Event{
		URL: r.URL, FetchedAt: r.Date.UTC(), Status: r.Status,
		PayloadDigest: "sha1:" + base32.StdEncoding.EncodeToString(r.Digest[:]),
		WARCFile:      r.File, Offset: r.Offset, Length: r.Length,
		Revisit: r.Kind == store.CaptureRevisit, NearDupOf: r.NearDupOf,
	}
}

// An ArchiveWriter stores what is fetched and says where each record
// went: the first sink of every capture, whose location the capture index
// and the later sinks name. It is called from many workers at once.
// *warc.Writer, WARC files on local disk, is the one weft has.
type ArchiveWriter interface {
	WriteExchange(warc.Exchange) (warc.Location, error)
	WriteMetadata(warc.Metadata) (warc.Location, error)
	Files() []string // the files written, oldest first
	Bytes() int64    // bytes written in all
	Close() error
}

var _ ArchiveWriter = (*warc.Writer)(nil)

// Sink receives every capture after it is durable: a downstream indexer, a
// message log. Delivery is at least once: an event is kept in the crawl's
// state (its outbox) until every sink has taken it, and delivered again
// after a crash. Capture is called from many workers at once.
type Sink interface {
	Capture(Event) error
	Close() error
}

// EventsFile is a Sink that appends each event to a file as a line of JSON,
// in one write, so that a reader tailing the file while the crawl runs
// never sees half a line.
type EventsFile struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// OpenEventsFile opens (creating, or appending to) the JSON Lines file at
// path.
func OpenEventsFile(path string) (*EventsFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("crawl: events file: %w", err)
	}
	return &EventsFile{f: f, path: path}, nil
}

// Capture appends e as one line.
func (s *EventsFile) Capture(e Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.f.Write(b); err != nil {
		return fmt.Errorf("crawl: events file %s: %w", s.path, err)
	}
	return nil
}

// Close closes the file.
func (s *EventsFile) Close() error { return s.f.Close() }

// emit hands captures that are now durable to the sinks. A sink that fails
// stops the crawl, as a WARC file that cannot be written does: what it
// feeds would miss captures.
func (c *Crawler) emitNow(recs []store.CaptureRecord) bool {
	for _, s := range c.cfg.Sinks {
		for _, r := range recs {
			if err := s.Capture(eventOf(r)); err != nil {
				c.fail(fmt.Errorf("crawl: page sink: %w", err))
				return false
			}
		}
	}
	return true
}

// metaOutbox prefixes the events not yet taken by every page sink. An
// event is written there in the batch that makes its capture durable, and
// deleted once every sink has it; events left there by a crash are
// delivered again at the next start. So delivery is at least once: a sink
// may see an event twice, never miss one.
const metaOutbox = "outbox/"

// stageEvents writes the events of recs into b's outbox and returns their
// names; nothing without sinks.
func (c *Crawler) stageEvents(b *store.Batch, recs []store.CaptureRecord) []string {
	if len(c.cfg.Sinks) == 0 || len(recs) == 0 {
		return nil
	}
	names := make([]string, len(recs))
	for i, r := range recs {
		names[i] = fmt.Sprintf("%s%020d", metaOutbox, c.outboxSeq.Add(1))
		v, err := json.Marshal(eventOf(r))
		if err != nil {
			b.Close() // cannot happen: an Event always marshals
			return nil
		}
		b.PutMeta(names[i], v)
	}
	return names
}

// emit delivers recs, whose events stageEvents put in the outbox, to every
// sink and then drops them from it. A sink that fails stops the crawl; the
// events stay in the outbox for the next start.
func (c *Crawler) emit(recs []store.CaptureRecord, names []string) {
	if len(c.cfg.Sinks) == 0 || !c.emitNow(recs) || len(names) == 0 {
		return
	}
	c.dropOutbox(names)
}

func (c *Crawler) dropOutbox(names []string) {
	b := c.state.db.NewBatch()
	for _, n := range names {
		b.DeleteMeta(n)
	}
	if err := b.Commit(false); err != nil {
		c.log.Warn("delivered page events not dropped from the outbox; they will be delivered again", "err", err)
	}
}

// replayOutbox delivers the events an earlier run made durable but did not
// see every sink take, oldest first, and sets the outbox sequence after
// them. Without sinks they are kept for a run that has them.
func (c *Crawler) replayOutbox() error {
	var names []string
	var events []Event
	err := c.state.db.MetaPrefix(metaOutbox, func(seq string, v []byte) bool { // names come without the prefix
		var e Event
		if json.Unmarshal(v, &e) == nil {
			names = append(names, metaOutbox+seq)
			events = append(events, e)
		}
		if n, err := strconv.ParseUint(seq, 10, 64); err == nil && n > c.outboxSeq.Load() {
			c.outboxSeq.Store(n)
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("crawl: read the page events outbox: %w", err)
	}
	if len(names) == 0 || len(c.cfg.Sinks) == 0 {
		return nil
	}
	for _, s := range c.cfg.Sinks {
		for _, e := range events {
			if err := s.Capture(e); err != nil {
				return fmt.Errorf("crawl: page sink, delivering the events of an earlier run: %w", err)
			}
		}
	}
	c.log.Info("page events of an earlier run delivered again", "events", len(events))
	c.dropOutbox(names)
	return nil
}
