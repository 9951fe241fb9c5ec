package fetch

import (
	"bytes"
	"crypto/tls"
	"net"
	"strconv"
	"sync"
	"time"
)

// wireConn records the bytes of each HTTP/1.x exchange as they cross the
// connection: below the HTTP parser and, over TLS, above it, as gowarc's
// recording dialer and Heritrix do. net/http's Transport reads and
// writes a connection from its own goroutines and keeps no record of the
// bytes: header case and order, duplicate and folded fields, chunk sizes,
// chunk extensions and trailers are lost once parsed. Get starts an
// exchange when the Transport hands it the connection (httptrace's
// GotConn, before the request is written) and ends it when the body has
// been read.
//
// A response's body is recorded only while it may differ from the body
// net/http returns, that is when its header block names a
// Transfer-Encoding; otherwise the body bytes are counted, not copied
// (Get keeps them anyway), so that recording costs a copy of the header
// block alone on most responses.
type wireConn struct {
	net.Conn
	idle time.Duration        // Config.IdleTimeout: the silence allowed
	tls  *tls.ConnectionState // nil over plain TCP
	// certErr is why the server's certificate failed verification, for a
	// host of Config.InsecureTLS; nil otherwise.
	certErr error

	mu  sync.Mutex
	cur *wire // the exchange being recorded; nil between exchanges
}

// wire is what one exchange wrote and read.
type wire struct {
	req  []byte
	resp []byte
	// head is the length of resp's final header block once it is whole
	// (after any 1xx interim responses), 0 before; skipped counts the
	// body bytes read and not copied (the header named no
	// Transfer-Encoding).
	head    int
	copying bool
	skipped int
}

func (c *wireConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		if w := c.cur; w != nil {
			w.read(p[:n])
		}
		c.mu.Unlock()
	}
	return n, err
}

// Write records p before it is sent: once sent, the answer may arrive and
// the exchange end before this goroutine runs again. What was not sent
// is taken back.
func (c *wireConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	w := c.cur
	if w != nil {
		w.req = append(w.req, p...)
	}
	c.mu.Unlock()
	n, err := c.Conn.Write(p)
	if n < len(p) && w != nil {
		c.mu.Lock()
		w.req = w.req[:len(w.req)-(len(p)-n)]
		c.mu.Unlock()
	}
	return n, err
}

// begin starts recording a new exchange on c, and restarts its silence
// clock. net/http keeps a read pending on an idle connection, with the
// deadline idleConn gave it when the connection went idle, and sends the
// request from another goroutine, whose Write pushes that deadline
// (idleConn.Write). On a busy machine that goroutine may run only after
// the deadline, when the connection sat idle for most of IdleTimeout:
// the request then fails as if the server had been silent, though it
// never had the request. begin runs as the connection is handed to the
// request (Get's GotConn), before the request is sent.
func (c *wireConn) begin() *wire {
	if c.idle > 0 {
		_ = c.Conn.SetReadDeadline(time.Now().Add(c.idle))
	}
	w := &wire{req: make([]byte, 0, 512), resp: make([]byte, 0, 1024)}
	c.mu.Lock()
	c.cur = w
	c.mu.Unlock()
	return w
}

// end stops recording w, and returns it whole: nothing more is added to
// it, whatever c reads or writes next.
func (c *wireConn) end(w *wire) *wire {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == w {
		c.cur = nil
	}
	return w
}

// read records p, read from the connection. Until the final header
// block is whole, what p holds past its end is not appended with it: a
// read of a 32 KB buffer would make the header's record 32 KB, only to be
// cut back to the header.
func (w *wire) read(p []byte) {
	for w.head == 0 && len(p) > 0 {
		n := headerEndAcross(w.resp, p)
		if n < 0 {
			w.resp = append(w.resp, p...)
			return
		}
		w.resp = append(w.resp, p[:n]...)
		p = p[n:]
		if code := statusCode(w.resp); code >= 100 && code < 200 && code != 101 {
			// An interim response (100 Continue, 103 Early Hints):
			// net/http reads past it to the final one, and so does
			// the record, which keeps only the final one.
			w.resp = w.resp[:0]
			continue
		}
		w.head = len(w.resp)
		w.copying = namesTransferEncoding(w.resp)
	}
	if w.copying {
		w.resp = append(w.resp, p...)
	} else {
		w.skipped += len(p)
	}
}

// headerEndAcross returns how many bytes of p, read after head (a header
// block not yet whole), complete the block; -1 if p does not. The blank
// line may begin in head's last two bytes.
func headerEndAcross(head, p []byte) int {
	var joint [4]byte
	tail := head[max(len(head)-2, 0):]
	b := append(append(joint[:0], tail...), p[:min(len(p), 2)]...)
	if end := headerEnd(b, 0); end > len(tail) {
		return end - len(tail)
	}
	return headerEnd(p, 0)
}

// headerEnd returns the index just past the blank line that ends the
// header block at the start of b, looking from from on; -1 if b holds no
// whole block yet. A bare LF ends lines as CRLF does, as net/http reads
// them.
func headerEnd(b []byte, from int) int {
	for i := from; i < len(b); i++ {
		if b[i] != '\n' {
			continue
		}
		if i+1 < len(b) && b[i+1] == '\n' {
			return i + 2
		}
		if i+2 < len(b) && b[i+1] == '\r' && b[i+2] == '\n' {
			return i + 3
		}
	}
	return -1
}

// statusCode is the code of the status line at the start of b, 0 if
// there is none.
func statusCode(b []byte) int {
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	_, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok || len(rest) < 3 {
		return 0
	}
	n, err := strconv.Atoi(string(rest[:3]))
	if err != nil {
		return 0
	}
	return n
}

// namesTransferEncoding reports whether a header block has a line that
// starts with "Transfer-Encoding" in any case: generous on purpose, so
// that every body net/http de-chunks is recorded as it came.
func namesTransferEncoding(head []byte) bool {
	const name = "transfer-encoding"
	for line := range bytes.Lines(head) {
		if len(line) >= len(name) && bytes.EqualFold(line[:len(name)], []byte(name)) {
			return true
		}
	}
	return false
}

// chunkedPrefix returns the length of the prefix of a chunked body b
// whose chunk data, de-chunked, is want bytes long, through the final
// chunk and its trailer section when want is all there is (the body was
// read whole); len(b) when b ends first (the body was cut off). It walks
// the framing as net/http's chunked reader does: a size in hex, an
// extension after ';' ignored, the data, CRLF (or a bare LF).
func chunkedPrefix(b []byte, want int, whole bool) int {
	i, got := 0, 0
	for {
		nl := bytes.IndexByte(b[i:], '\n')
		if nl < 0 {
			return len(b)
		}
		line := bytes.TrimRight(b[i:i+nl], "\r")
		i += nl + 1
		if semi := bytes.IndexByte(line, ';'); semi >= 0 {
			line = line[:semi]
		}
		size, err := strconv.ParseUint(string(bytes.TrimRight(line, " \t")), 16, 63)
		if err != nil {
			return len(b)
		}
		if size == 0 {
			if !whole {
				return i
			}
			// The trailer section: fields up to a blank line.
			for {
				nl := bytes.IndexByte(b[i:], '\n')
				if nl < 0 {
					return len(b)
				}
				blank := nl == 0 || (nl == 1 && b[i] == '\r')
				i += nl + 1
				if blank {
					return i
				}
			}
		}
		if left := want - got; uint64(left) < size {
			// The body was cut at its cap inside this chunk.
			return min(i+left, len(b))
		}
		if i+int(size) > len(b) {
			return len(b)
		}
		i += int(size)
		got += int(size)
		if i < len(b) && b[i] == '\r' {
			i++
		}
		if i < len(b) && b[i] == '\n' {
			i++
		}
		if got == want && !whole {
			return i
		}
	}
}
