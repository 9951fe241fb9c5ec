package synthweb

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Request is one request (or, for the silent host, one connection) as the
// server saw it.
type Request struct {
	Host      string // Host header, lowercase (authority as sent); "" on the silent host
	Addr      string // local listener address that received it
	Method    string // "" on the silent host
	Path      string // request URI as received (path + "?" + query); "" on the silent host
	Status    int    // status code written; 0 if none was (a hang, an abort, a dropped client)
	UserAgent string
	Start     time.Time // when the handler started, before any latency
	End       time.Time // when the handler returned; zero while it is still running
	Bytes     int64     // body bytes written
	// Abandoned says the client left before the handler returned: from
	// then to End the server went on working for nobody, and a polite
	// client's next request waits for End plus its delay.
	Abandoned bool
}

// requestLog records requests in arrival order. A request is appended when
// it starts and completed in place when it ends, so hanging requests are
// visible while they hang.
type requestLog struct {
	mu       sync.Mutex
	reqs     []Request
	inflight int
	idle     chan struct{} // closed when inflight drops to zero
}

// begin stamps r.Start under the lock, so that Start times are in log order.
func (l *requestLog) begin(r Request) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	r.Start = time.Now()
	l.reqs = append(l.reqs, r)
	if l.inflight == 0 {
		l.idle = make(chan struct{})
	}
	l.inflight++
	return len(l.reqs) - 1
}

func (l *requestLog) end(i, status int, bytes int64, end time.Time, abandoned bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := &l.reqs[i]
	r.Status, r.Bytes, r.End, r.Abandoned = status, bytes, end, abandoned
	if l.inflight--; l.inflight == 0 {
		close(l.idle)
	}
}

// waitIdle waits until no request is in flight.
func (l *requestLog) waitIdle(ctx context.Context) error {
	for {
		l.mu.Lock()
		idle, n := l.idle, l.inflight
		l.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return fmt.Errorf("synthweb: wait for %d requests in flight: %w", n, ctx.Err())
		}
	}
}

func (l *requestLog) snapshot() []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Request(nil), l.reqs...)
}

// Log returns a copy of every request received so far, in arrival order.
// A request whose handler is still running has a zero End; a client can
// have read a whole response a moment before its handler returns, so call
// WaitIdle before judging a finished crawl from the log. The log is never
// trimmed (about 200 bytes per request).
func (w *Web) Log() []Request { return w.log.snapshot() }

// WaitIdle waits until no request is being handled, so that every entry of
// Log is complete, or until ctx is done. Hanging requests (robots.txt
// timeouts, the silent host) count as being handled until they end.
func (w *Web) WaitIdle(ctx context.Context) error { return w.log.waitIdle(ctx) }

// logWriter records the status and body size a handler writes. Handlers
// that take over the connection (see hijack) set status and bytes
// themselves, and conn, which hostHandler then closes and releases.
type logWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	conn   net.Conn // the hijacked connection, if any
	enc    *encoder // writeBody's coding (Config.Encoding); nil if none
}

func (lw *logWriter) WriteHeader(code int) {
	if lw.status == 0 && code >= 200 {
		lw.status = code
	}
	lw.ResponseWriter.WriteHeader(code)
}

func (lw *logWriter) Write(b []byte) (int, error) {
	if lw.status == 0 {
		lw.status = http.StatusOK
	}
	n, err := lw.ResponseWriter.Write(b)
	lw.bytes += int64(n)
	return n, err
}

// Flush lets the endless host push bytes to the client as it makes them.
func (lw *logWriter) Flush() {
	if f, ok := lw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController access to the connection.
func (lw *logWriter) Unwrap() http.ResponseWriter { return lw.ResponseWriter }

// hostHandler serves one host's listener and logs every request.
type hostHandler struct {
	w *Web
	h *host
}

func (hh hostHandler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w, h := hh.w, hh.h
	i := w.log.begin(Request{
		Host:      strings.ToLower(r.Host),
		Addr:      h.addr,
		Method:    r.Method,
		Path:      r.RequestURI,
		UserAgent: r.UserAgent(),
	})
	lw := &logWriter{ResponseWriter: rw, enc: w.enc}
	// Deferred so that the entry is completed even when a handler aborts
	// the connection by panicking with http.ErrAbortHandler. A hijacked
	// connection is released after the entry is complete, so that Close,
	// which waits for the release, never leaves an entry without its End.
	defer func() {
		// net/http cancels the request's context when the client's
		// connection closes, and otherwise only after the handler returns.
		w.log.end(i, lw.status, lw.bytes, time.Now(), r.Context().Err() != nil)
		if lw.conn != nil {
			w.releaseConn(lw.conn)
		}
	}()
	w.serve(lw, r, h)
}

// FirstTries returns log without the requests that ask once more for a
// URL (the same listener and path) whose answer before was one a crawl
// that ends asks once more after: a 500, 502 or 504, or none (a timeout,
// a broken connection). A third request counts again. What a check that
// each page was fetched once counts.
func FirstTries(log []Request) []Request {
	type url struct{ addr, path string }
	retry := map[url]bool{}
	out := make([]Request, 0, len(log))
	for _, r := range log {
		u := url{r.Addr, r.Path}
		if retry[u] {
			retry[u] = false
			continue
		}
		out = append(out, r)
		retry[u] = r.Status == 0 || r.Status == http.StatusInternalServerError ||
			r.Status == http.StatusBadGateway || r.Status == http.StatusGatewayTimeout
	}
	return out
}
