// Package jetstream connects weft to NATS JetStream, the message log of
// a crawl spread over several machines: today, the stream of page events
// that indexers read downstream.
package jetstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-crawler/weft/internal/events"
	"github.com/weft-crawler/weft/internal/partition"
)

// Defaults of PagesConfig.
const (
	DefaultPagesStream  = "WEFT_PAGES"
	DefaultPagesSubject = "weft.pages"
	// DefaultDuplicates is the stream's deduplication window: a capture
	// published again within it (the crawl delivers at least once) is
	// stored once.
	DefaultDuplicates = 10 * time.Minute
)

// PagesConfig says where page events go.
type PagesConfig struct {
	// URL is the NATS server (or servers, comma-separated): nats://host:4222.
	URL string
	// Stream is the JetStream stream; "" means DefaultPagesStream. It is
	// created if missing, on Subject.> with file storage; an existing one
	// keeps its settings, and must take Subject.>.
	Stream string
	// Subject prefixes each event's subject; "" means DefaultPagesSubject.
	// An event goes to <Subject>.<partition of its host>, so that an
	// indexer can read one partition's pages in order.
	Subject string
	// Partitions is the crawl's partition count, for the subject; zero
	// means 64, the crawl's default.
	Partitions int
	// Replicas of a stream created here; zero means 1.
	Replicas int
	// Timeout bounds one publish, acknowledgement included; zero means 10s.
	Timeout time.Duration
}

// PageEvent is the message published for every stored capture, as JSON.
// Its fields are the schema an indexer reads (documented in the README):
// the page's URL, when it was fetched, its HTTP status, the SHA-1 of its
// payload (as in WARC), and where its record is: the WARC file (whose
// object key, once uploaded, is the configured prefix and this name), the
// offset and length of the record in it.
type PageEvent struct {
	URL         string    `json:"url"`
	FetchedAt   time.Time `json:"fetched_at"`
	Status      int       `json:"status"`
	ContentHash string    `json:"content_hash"` // "sha1:" and base32: the payload digest
	WARCFile    string    `json:"warc_file"`
	Offset      int64     `json:"offset"`
	Length      int64     `json:"length"`
	Revisit     bool      `json:"revisit,omitempty"`
	NearDupOf   string    `json:"near_dup_of,omitempty"`
	// Fields are what the crawl's extensions extracted from the page
	// (events.Event.Fields); absent when none did. An optional field, so
	// the schema stays version 1.
	Fields        map[string]any `json:"fields,omitempty"`
	SchemaVersion int            `json:"v"`
}

// Pages publishes page events to a JetStream stream. It is a events.Sink.
type Pages struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	subject string
	parts   int
	timeout time.Duration
}

var _ events.Sink = (*Pages)(nil)

// OpenPages connects, makes sure the stream exists, and returns the sink.
func OpenPages(ctx context.Context, cfg PagesConfig) (*Pages, error) {
	if cfg.URL == "" {
		return nil, errors.New("jetstream: no server URL")
	}
	if cfg.Stream == "" {
		cfg.Stream = DefaultPagesStream
	}
	if cfg.Subject == "" {
		cfg.Subject = DefaultPagesSubject
	}
	if cfg.Partitions == 0 {
		cfg.Partitions = 64
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	nc, err := nats.Connect(cfg.URL, nats.Name("weft page events"), nats.MaxReconnects(-1))
	if err != nil {
		return nil, fmt.Errorf("jetstream: connect %s: %w", cfg.URL, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	if err := ensureStream(ctx, js, cfg); err != nil {
		nc.Close()
		return nil, err
	}
	return &Pages{nc: nc, js: js, subject: cfg.Subject, parts: cfg.Partitions, timeout: cfg.Timeout}, nil
}

// ensureStream creates the stream if it is missing. An existing one is
// the operator's: its limits, replicas and retention are left alone, and
// it must only take the subjects and deduplicate.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg PagesConfig) error {
	want := cfg.Subject + ".>"
	st, err := js.Stream(ctx, cfg.Stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = js.CreateStream(ctx, jetstream.StreamConfig{
			Name:       cfg.Stream,
			Subjects:   []string{want},
			Storage:    jetstream.FileStorage,
			Replicas:   cfg.Replicas,
			Duplicates: DefaultDuplicates,
		})
		if err == nil || !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			if err != nil {
				return fmt.Errorf("jetstream: create stream %s on %s: %w", cfg.Stream, want, err)
			}
			return nil
		}
		st, err = js.Stream(ctx, cfg.Stream) // another node made it first
	}
	if err != nil {
		return fmt.Errorf("jetstream: stream %s: %w", cfg.Stream, err)
	}
	info := st.CachedInfo()
	if !slices.Contains(info.Config.Subjects, want) && !slices.Contains(info.Config.Subjects, ">") {
		return fmt.Errorf("jetstream: stream %s takes %v, not %s: give it that subject or name another stream", cfg.Stream, info.Config.Subjects, want)
	}
	if info.Config.Duplicates <= 0 {
		return fmt.Errorf("jetstream: stream %s keeps no duplicate window: repeats would be stored twice", cfg.Stream)
	}
	return nil
}

// Capture publishes e and waits for the stream to acknowledge it. Its
// message id is the capture's identity (URL, time, record), so the stream
// stores a capture delivered twice once.
func (p *Pages) Capture(e events.Event) error {
	ev := PageEvent{
		URL: e.URL, FetchedAt: e.FetchedAt, Status: e.Status, ContentHash: e.PayloadDigest,
		WARCFile: e.WARCFile, Offset: e.Offset, Length: e.Length, Revisit: e.Revisit, NearDupOf: e.NearDupOf,
		Fields: e.Fields, SchemaVersion: 1,
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	host := hostOf(e.URL)
	subj := p.subject + "." + strconv.Itoa(partition.Of(host, p.parts))
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	if _, err := p.js.Publish(ctx, subj, b, jetstream.WithMsgID(msgID(ev))); err != nil {
		return fmt.Errorf("jetstream: publish the capture of %s: %w", e.URL, err)
	}
	return nil
}

// msgID identifies a capture: the same fetch archived once has one record.
func msgID(e PageEvent) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%d\n%s\n%d", e.URL, e.FetchedAt.UnixNano(), e.WARCFile, e.Offset)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Close closes the connection; every Capture has had its acknowledgement.
func (p *Pages) Close() error {
	p.nc.Close()
	return nil
}

// hostOf is the authority of a canonical URL, the key the crawl
// partitions hosts by.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}
