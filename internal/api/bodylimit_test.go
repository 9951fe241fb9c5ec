package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// startServer starts s and stops it at the end of the test.
func startServer(t *testing.T, s *Server) {
	t.Helper()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Close(ctx)
	})
}

// rawRequest opens a TCP connection to s and writes a POST's header,
// declaring a body of length bytes, and the extra header lines given.
func rawRequest(t *testing.T, s *Server, path string, length int64, extra ...string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	// A deadline, not a wait: a server that never answers fails the test
	// instead of hanging it.
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer t\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n",
		path, length, strings.Join(append(extra, ""), "\r\n"))
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	return conn
}

// writeBody writes n bytes of body to conn.
func writeBody(conn net.Conn, n int64) (int64, error) {
	chunk := []byte(strings.Repeat("x", 64<<10))
	var sent int64
	for sent < n {
		m, err := conn.Write(chunk[:min(int64(len(chunk)), n-sent)])
		sent += int64(m)
		if err != nil {
			return sent, err
		}
	}
	return sent, nil
}

// check413 reads the response from conn: 413, Connection: close and a
// JSON error body_too_large; then the server closes the connection.
func check413(t *testing.T, conn net.Conn) {
	t.Helper()
	var raw strings.Builder // what was read, to see the header as sent
	r := bufio.NewReader(io.TeeReader(conn, &raw))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("reading the answer: %v; want a 413, not a reset", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Error struct{ Code, Message string }
	}
	head, _, _ := strings.Cut(raw.String(), "\r\n\r\n")
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close || !strings.Contains(head+"\r\n", "\r\nConnection: close\r\n") ||
		json.Unmarshal(body, &e) != nil || e.Error.Code != "body_too_large" {
		t.Fatalf("answer %q, body %q; want 413, Connection: close and a JSON body_too_large", head, body)
	}
	if n, err := r.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("after the 413: read %d bytes, %v; want the connection closed", n, err)
	}
}

// A client that writes its whole body before it reads, as simple ones
// do, gets the 413 for a body over the cap, not a reset: the server reads
// and discards what it sends (up to a bound) before it answers and closes
// the connection. So does a body of no declared length (chunked) that
// passes the cap as the handler reads it.
func TestOversizedBodyGets413(t *testing.T) {
	s, err := New(Config{Addr: "127.0.0.1:0", Token: "t"}, resourcesOf(&fakeCrawl{}))
	if err != nil {
		t.Fatal(err)
	}
	startServer(t, s)
	const size = 4 << 20 // four times the cap, 1 MiB
	conn := rawRequest(t, s, "/v1/seeds", size)
	if sent, err := writeBody(conn, size); err != nil {
		t.Fatalf("writing the body: %v after %d bytes; the server should read it all", err, sent)
	}
	check413(t, conn)

	// Chunked: no length to judge before reading.
	conn, err = net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(conn, "POST /v1/seeds HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer t\r\nTransfer-Encoding: chunked\r\n\r\n")
	chunk := strings.Repeat("x", 64<<10)
	for range size / len(chunk) {
		if _, err := fmt.Fprintf(conn, "%x\r\n%s\r\n", len(chunk), chunk); err != nil {
			t.Fatalf("writing the chunked body: %v", err)
		}
	}
	io.WriteString(conn, "0\r\n\r\n")
	check413(t, conn)
}

// What the server reads of a body over the cap is bounded, in bytes and
// in time: a client that sends without end is cut off, and one that stops
// sending gets its 413 when the time is up, not after the server's read
// timeout. A client that asked to be told before it sends (Expect:
// 100-continue) is told 413 at once, and nothing is read.
func TestOversizedBodyDrainIsBounded(t *testing.T) {
	s, err := New(Config{Addr: "127.0.0.1:0", Token: "t", MaxBody: 1 << 10}, resourcesOf(&fakeCrawl{}))
	if err != nil {
		t.Fatal(err)
	}
	s.drainMax, s.drainTime = 64<<10, 200*time.Millisecond
	startServer(t, s)

	// Without end: the server stops reading, and the writer's writes fail
	// once the kernel's buffers are full.
	conn := rawRequest(t, s, "/v1/seeds", 1<<40)
	sent, err := writeBody(conn, 1<<40)
	if ne := net.Error(nil); err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("after %d bytes: %v; want the server to have closed the connection", sent, err)
	}

	// Stopped: the answer comes when the time is up.
	conn = rawRequest(t, s, "/v1/seeds", 1<<30)
	writeBody(conn, 2<<10)
	start := time.Now()
	check413(t, conn)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the 413 took %v", took)
	}

	// Expect: 100-continue: no 100 Continue, the 413 at once.
	conn = rawRequest(t, s, "/v1/seeds", 1<<30, "Expect: 100-continue")
	check413(t, conn)
}
