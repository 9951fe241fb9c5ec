package memnet

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestHTTPOnFakeTime: an HTTP server and client talk over the network
// inside a synctest bubble, where a handler's hour-long pause takes no
// time at all: every wait is on the bubble's clock.
func TestHTTPOnFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New()
		ln, err := n.Listen("tcp", "127.0.1.7:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().(*net.TCPAddr)
		if addr.IP.String() != "127.0.1.7" || addr.Port == 0 {
			t.Fatalf("listening on %v", addr)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Hour)
			io.WriteString(w, "after an hour, from "+r.RemoteAddr)
		})}
		go srv.Serve(ln)
		tr := &http.Transport{DialContext: n.DialContext}
		defer tr.CloseIdleConnections()
		start := time.Now()
		resp, err := (&http.Client{Transport: tr}).Get("http://" + addr.String() + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if time.Since(start) != time.Hour || string(body) == "" {
			t.Errorf("%q after %v, want an answer after exactly an hour", body, time.Since(start))
		}
		srv.Close()
	})
}

func TestDialRefusedAndClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New()
		if _, err := n.DialContext(t.Context(), "tcp", "127.0.0.9:80"); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("dial with no listener: %v, want ECONNREFUSED", err)
		}
		ln, err := n.Listen("tcp", "127.0.0.9:80")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.Listen("tcp", "127.0.0.9:80"); !errors.Is(err, syscall.EADDRINUSE) {
			t.Errorf("second listener on one address: %v, want EADDRINUSE", err)
		}
		// A dial nobody accepts waits, and ends with its context.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := n.DialContext(ctx, "tcp", "127.0.0.9:80"); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("unaccepted dial: %v, want its deadline", err)
		}
		ln.Close()
		if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("accept after close: %v", err)
		}
		if _, err := n.DialContext(t.Context(), "tcp", "127.0.0.9:80"); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("dial after close: %v, want ECONNREFUSED", err)
		}
		if _, err := n.Listen("udp", "127.0.0.9:80"); err == nil {
			t.Error("udp listener accepted")
		}
	})
}
