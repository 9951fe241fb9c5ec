// Package events holds what a crawl tells the world downstream of its
// archive: one Event per capture once it is durable, the Sink interface
// that receives them, and File, a sink writing JSON Lines.
package events

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
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
	Title         string    `json:"title,omitempty"`       // an HTML page's <title>; a revisit's is the capture's it refers to, when this crawl made it
	// Fields are what the crawl's extensions extracted from the page (a
	// product's title and price: handlers of the public API, programs of
	// the command protocol), by name; absent when none did.
	Fields map[string]any `json:"fields,omitempty"`
}

// Sink receives every capture after it is durable: a downstream indexer, a
// message log. Delivery is at least once: an event is kept in the crawl's
// state (its outbox) until every sink has taken it, and delivered again
// after a crash. Capture is called from many workers at once.
type Sink interface {
	Capture(Event) error
	Close() error
}

// File is a Sink that appends each event to a file as a line of JSON,
// in one write, so that a reader tailing the file while the crawl runs
// never sees half a line.
type File struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// OpenFile opens (creating, or appending to) the JSON Lines file at
// path.
func OpenFile(path string) (*File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	return &File{f: f, path: path}, nil
}

// Capture appends e as one line.
func (s *File) Capture(e Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.f.Write(b); err != nil {
		return fmt.Errorf("events: %s: %w", s.path, err)
	}
	return nil
}

// Close closes the file.
func (s *File) Close() error { return s.f.Close() }
