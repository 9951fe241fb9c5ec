package fetch

import (
	"errors"
	"fmt"
	"io"
	"testing"
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
