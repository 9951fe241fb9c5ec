package crawl

import (
	"context"
	"errors"
	"testing"

	"github.com/weft-crawler/weft/internal/synthweb"
)

// TestReadyAndDone: Ready closes once the crawl takes work, and only then
// does Offer take URLs; Done closes once Run has returned, and Offer
// refuses again. A Crawler discarded without running is Done, never
// Ready.
func TestReadyAndDone(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 5, Hosts: 2, PagesPerHost: 4})
	cfg := testConfig(t, web, 2, 0)
	cfg.KeepAlive = true
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Ready():
		t.Fatal("ready before Run")
	case <-c.Done():
		t.Fatal("done before Run")
	default:
	}
	if err := c.Offer([]Offered{{URL: web.Seeds()[0]}}); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Offer before Run: %v, want ErrNotRunning", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx)
		ran <- err
	}()
	select {
	case <-c.Ready():
	case err := <-ran:
		t.Fatalf("Run ended before it was ready: %v", err)
	}
	if err := c.Offer([]Offered{{URL: web.Seeds()[0]}}); err != nil {
		t.Fatalf("Offer once ready: %v", err)
	}
	select {
	case <-c.Done():
		t.Fatal("done while running")
	default:
	}
	cancel()
	<-c.Done()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if err := c.Offer([]Offered{{URL: web.Seeds()[0]}}); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Offer once done: %v, want ErrNotRunning", err)
	}

	d, err := New(testConfig(t, web, 2, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Discard(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.Done():
	default:
		t.Fatal("a discarded crawl is not done")
	}
	select {
	case <-d.Ready():
		t.Fatal("a discarded crawl is ready")
	default:
	}
}
