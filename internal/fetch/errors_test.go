package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"
)

func TestKindNames(t *testing.T) {
	// Metric labels: these must never change.
	want := map[Kind]string{
		KindUnknown:  "unknown",
		KindDNS:      "dns",
		KindRefused:  "refused",
		KindConnect:  "connect",
		KindTimeout:  "timeout",
		KindTLS:      "tls",
		KindProtocol: "protocol",
		KindCanceled: "canceled",
		KindBadURL:   "bad_url",
		Kind(99):     "unknown",
	}
	for k, name := range want {
		if k.String() != name {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), k.String(), name)
		}
	}
}

func TestErrorAndKindOf(t *testing.T) {
	e := &Error{Kind: KindDNS, URL: "http://x.test/", Err: io.ErrUnexpectedEOF}
	if got, want := e.Error(), "fetch http://x.test/: dns: unexpected EOF"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("crawl: %w", e)
	if KindOf(wrapped) != KindDNS || !errors.Is(wrapped, io.ErrUnexpectedEOF) {
		t.Errorf("KindOf/Is through wrapping failed")
	}
	if KindOf(io.EOF) != KindUnknown || KindOf(nil) != KindUnknown {
		t.Errorf("foreign errors must be KindUnknown")
	}
}

// TestUnsent: a failure before there was a connection to send the
// request on (refused, a TLS handshake that never ends) says the server
// holds no request; one after it was sent (the answer never came) does
// not.
func TestUnsent(t *testing.T) {
	cfg := testConfig()
	cfg.TLSHandshakeTimeout = 200 * time.Millisecond
	cfg.ResponseHeaderTimeout = 200 * time.Millisecond
	f := newFetcher(t, cfg)
	silent := newRawServer(t, "tcp", "127.0.0.1:0", func(c net.Conn, done <-chan struct{}) { <-done })
	for _, c := range []struct {
		name, url string
		kind      Kind
		unsent    bool
	}{
		{"refused", "http://" + freePort(t) + "/", KindConnect, true},
		{"handshake never ends", "https://" + silent.addr() + "/", KindTimeout, true},
		{"no answer to the request", "http://" + silent.addr() + "/", KindTimeout, false},
	} {
		_, err := f.Get(context.Background(), c.url, nil)
		if KindOf(err) != c.kind || Unsent(err) != c.unsent {
			t.Errorf("%s: %v (kind %v), unsent %v; want kind %v, unsent %v", c.name, err, KindOf(err), Unsent(err), c.kind, c.unsent)
		}
	}
}
