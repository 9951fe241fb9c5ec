package events

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// WebhookConfig describes a Webhook.
type WebhookConfig struct {
	// URL receives the events: each POST's body is events as JSON Lines
	// (Content-Type application/x-ndjson), up to MaxBatch of them.
	URL string
	// Header is sent with every POST (an Authorization, say).
	Header http.Header
	// Client makes the requests; nil means one with a 30-second timeout.
	Client *http.Client
	// MaxBatch bounds the events of one POST; zero means 100.
	MaxBatch int
	// GiveUp is how long a batch is retried before Capture fails (and the
	// crawl stops, its events kept for the next run); zero means 10
	// minutes (DefaultGiveUp). RetryWait is the first wait between tries, doubled up to a
	// minute; zero means a second. A Retry-After is honoured within
	// GiveUp.
	GiveUp, RetryWait time.Duration
}

// DefaultGiveUp is WebhookConfig.GiveUp's default.
const DefaultGiveUp = 10 * time.Minute

// Webhook is a Sink that POSTs events to a URL, with retry and
// back-pressure.
//
// Capture returns once the POST that carries its event has been answered
// 2xx: the crawl's outbox keeps an event until every sink has taken it,
// so a crash loses none, and a slow or failing endpoint slows the crawl's
// workers down rather than piling events up in memory. The events of
// captures made at the same moment by many workers go in one POST. A
// network error, a 408, 429 or 5xx answer is retried with doubling waits;
// another answer, or GiveUp spent, fails the Captures of that batch.
// Delivery is at least once: an endpoint that timed out after taking a
// batch sees it again (an event's url, fetched_at and payload_digest name
// it).
type Webhook struct {
	cfg     WebhookConfig
	mu      sync.Mutex
	pending []*delivery // events not yet in a POST
	wake    chan struct{}
	ctx     context.Context
	stop    context.CancelFunc
	done    chan struct{}
}

// delivery is one event and its Capture, waiting.
type delivery struct {
	line []byte
	err  chan error
}

// NewWebhook checks cfg and starts the sender; Close stops it.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	req, err := http.NewRequest(http.MethodPost, cfg.URL, nil)
	if err != nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") || req.URL.Host == "" {
		return nil, fmt.Errorf("events: webhook URL %q: want an http or https URL", cfg.URL)
	}
	if cfg.MaxBatch < 0 || cfg.GiveUp < 0 || cfg.RetryWait < 0 {
		return nil, fmt.Errorf("events: webhook %s: negative batch, give-up or retry wait", cfg.URL)
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.MaxBatch == 0 {
		cfg.MaxBatch = 100
	}
	if cfg.GiveUp == 0 {
		cfg.GiveUp = DefaultGiveUp
	}
	if cfg.RetryWait == 0 {
		cfg.RetryWait = time.Second
	}
	ctx, stop := context.WithCancel(context.Background())
	w := &Webhook{cfg: cfg, wake: make(chan struct{}, 1), ctx: ctx, stop: stop, done: make(chan struct{})}
	go w.send()
	return w, nil
}

// Capture implements Sink: it returns once e is delivered, or failed.
func (w *Webhook) Capture(e Event) error {
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("events: webhook %s: %w", w.cfg.URL, err)
	}
	d := &delivery{line: append(line, '\n'), err: make(chan error, 1)}
	w.mu.Lock()
	w.pending = append(w.pending, d)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	select {
	case err := <-d.err:
		return err
	case <-w.done:
		select {
		case err := <-d.err: // delivered just as it closed
			return err
		default:
			return fmt.Errorf("events: webhook %s: closed before the event was delivered", w.cfg.URL)
		}
	}
}

// send POSTs what is pending, a batch at a time, until Close.
func (w *Webhook) send() {
	defer close(w.done)
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-w.wake:
		}
		for {
			w.mu.Lock()
			n := min(len(w.pending), w.cfg.MaxBatch)
			batch := w.pending[:n:n]
			w.pending = w.pending[n:]
			w.mu.Unlock()
			if n == 0 {
				break
			}
			err := w.post(batch)
			for _, d := range batch {
				d.err <- err
			}
		}
	}
}

// post delivers one batch, retrying what may pass later.
func (w *Webhook) post(batch []*delivery) error {
	var body bytes.Buffer
	for _, d := range batch {
		body.Write(d.line)
	}
	deadline := time.Now().Add(w.cfg.GiveUp)
	wait := w.cfg.RetryWait
	for try := 1; ; try++ {
		retry, after, err := w.try(body.Bytes())
		if err == nil {
			return nil
		}
		if !retry {
			return fmt.Errorf("events: webhook %s: %w", w.cfg.URL, err)
		}
		if after > 0 {
			wait = after
		}
		if time.Now().Add(wait).After(deadline) {
			return fmt.Errorf("events: webhook %s: gave up after %d tries in %v: %w", w.cfg.URL, try, w.cfg.GiveUp, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-w.ctx.Done():
			t.Stop()
			return fmt.Errorf("events: webhook %s: closed while retrying: %w", w.cfg.URL, err)
		}
		wait = min(2*wait, time.Minute)
	}
}

// try makes one POST; retry says whether a later one may pass, after how
// long the server asked to wait (0: not said).
func (w *Webhook) try(body []byte) (retry bool, after time.Duration, err error) {
	req, err := http.NewRequestWithContext(w.ctx, http.MethodPost, w.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return false, 0, err
	}
	for k, vs := range w.cfg.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := w.cfg.Client.Do(req)
	if err != nil {
		return w.ctx.Err() == nil, 0, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return false, 0, nil
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			after = time.Duration(s) * time.Second
		}
		return true, after, errors.New(resp.Status)
	default:
		return false, 0, errors.New(resp.Status)
	}
}

// Close stops the sender: a Capture still waiting fails. It does not
// close the client's connections.
func (w *Webhook) Close() error {
	w.stop()
	<-w.done
	return nil
}
