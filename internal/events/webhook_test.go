package events

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/testwait"
)

// endpoint is a webhook receiver on loopback that answers what answer
// says, and records each POST's events.
type endpoint struct {
	mu      sync.Mutex
	posts   [][]Event
	arrived chan int                       // a POST's number, as it arrives
	answer  func(n int) (int, http.Header) // status for POST n (from 1)
	release chan struct{}                  // when not nil, each POST waits for it
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var evs []Event
	sc := bufio.NewScanner(r.Body)
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		evs = append(evs, ev)
	}
	e.mu.Lock()
	e.posts = append(e.posts, evs)
	n := len(e.posts)
	e.mu.Unlock()
	if e.arrived != nil {
		e.arrived <- n
	}
	if e.release != nil {
		<-e.release
	}
	code, hdr := e.answer(n)
	for k, v := range hdr {
		w.Header()[k] = v
	}
	if r.Header.Get("Content-Type") != "application/x-ndjson" || r.Header.Get("Authorization") != "Bearer t" {
		code = http.StatusUnauthorized
	}
	w.WriteHeader(code)
}

func startEndpoint(t *testing.T, e *endpoint) (*Webhook, func()) {
	t.Helper()
	srv := httptest.NewServer(e)
	w, err := NewWebhook(WebhookConfig{URL: srv.URL, Header: http.Header{"Authorization": {"Bearer t"}}, RetryWait: time.Millisecond, GiveUp: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return w, func() { w.Close(); srv.Close() }
}

// A 503, a 429 and a dropped connection are retried until the endpoint
// takes the event; the fields of an extension go with it.
func TestWebhookRetries(t *testing.T) {
	e := &endpoint{answer: func(n int) (int, http.Header) {
		switch n {
		case 1:
			return http.StatusServiceUnavailable, nil
		case 2:
			return http.StatusTooManyRequests, http.Header{"Retry-After": {"0"}}
		}
		return http.StatusNoContent, nil
	}}
	w, stop := startEndpoint(t, e)
	defer stop()
	ev := Event{URL: "http://a.test/p/1", Status: 200, Fields: map[string]any{"price": "12.50"}}
	if err := w.Capture(ev); err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.posts) != 3 || len(e.posts[2]) != 1 || e.posts[2][0].URL != ev.URL || e.posts[2][0].Fields["price"] != "12.50" {
		t.Errorf("posts %v, want the event three times, taken the third", e.posts)
	}
}

// Capture returns only once the endpoint has answered: a slow endpoint
// holds the crawl's workers (back-pressure), and the events that came
// meanwhile go in one POST.
func TestWebhookBackPressure(t *testing.T) {
	e := &endpoint{arrived: make(chan int, 10), release: make(chan struct{}), answer: func(int) (int, http.Header) { return 200, nil }}
	w, stop := startEndpoint(t, e)
	defer stop()
	first := make(chan error, 1)
	go func() { first <- w.Capture(Event{URL: "http://a.test/0"}) }()
	<-e.arrived // the first POST is at the endpoint, which has not answered
	select {
	case err := <-first:
		t.Fatalf("Capture returned (%v) before the endpoint answered", err)
	default:
	}
	var wg sync.WaitGroup
	for i := 1; i <= 5; i++ {
		wg.Go(func() {
			if err := w.Capture(Event{URL: fmt.Sprintf("http://a.test/%d", i)}); err != nil {
				t.Error(err)
			}
		})
	}
	waitPending(t, w, 5)
	close(e.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.posts) != 2 || len(e.posts[1]) != 5 {
		t.Errorf("%d posts of %v events, want the first alone and the five that waited together", len(e.posts), e.posts)
	}
}

// waitPending waits until n events wait for the sender, which the
// endpoint holds.
func waitPending(t *testing.T, w *Webhook, n int) {
	t.Helper()
	testwait.Eventually(t, 10*time.Second, fmt.Sprintf("%d events pending", n), func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.pending) == n
	})
}

// An answer that will not change (400) fails at once; a failure past
// GiveUp fails after it; a closed webhook fails what waits.
func TestWebhookFailures(t *testing.T) {
	e := &endpoint{answer: func(int) (int, http.Header) { return http.StatusBadRequest, nil }}
	w, stop := startEndpoint(t, e)
	if err := w.Capture(Event{URL: "http://a.test/"}); err == nil || !strings.Contains(err.Error(), "400 Bad Request") {
		t.Errorf("400: %v", err)
	}
	stop()
	if len(e.posts) != 1 {
		t.Errorf("a 400 was tried %d times, want once", len(e.posts))
	}

	e = &endpoint{answer: func(int) (int, http.Header) { return http.StatusBadGateway, nil }}
	srv := httptest.NewServer(e)
	defer srv.Close()
	w, err := NewWebhook(WebhookConfig{URL: srv.URL, Header: http.Header{"Authorization": {"Bearer t"}}, RetryWait: 10 * time.Millisecond, GiveUp: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Capture(Event{URL: "http://a.test/"}); err == nil || !strings.Contains(err.Error(), "gave up after") {
		t.Errorf("502 for ever: %v", err)
	}
	w.Close()
	if err := w.Capture(Event{URL: "http://a.test/"}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("after Close: %v", err)
	}
	for _, u := range []string{"", "ftp://a.test/", "http://"} {
		if _, err := NewWebhook(WebhookConfig{URL: u}); err == nil {
			t.Errorf("URL %q accepted", u)
		}
	}
}
