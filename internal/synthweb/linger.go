package synthweb

import (
	"net/http"
	"strconv"
	"time"
)

// HostileLinger is a server that goes on working after the client has
// given up. Its robots.txt is 404 and "/" a small page linking to
// /work/1 and /work/2. Each /work/N answers 200 with a Content-Length of
// LingerBodyBytes, sends the first LingerSentBytes of the body and then
// nothing; once the client has gone (its silence timeout), the handler
// goes on running for Config.LingerFor before it returns, and its log
// entry's End says when that was. A client that asks again before then,
// or before End plus its delay, sent a second request to a server still
// busy with the first. If the client waits HangLimit without giving up,
// the connection is closed.
const HostileLinger = "linger"

// The linger host's sizes.
const (
	LingerBodyBytes = 16 << 10
	LingerSentBytes = 1 << 10
)

// serveLinger answers the linger host.
func (w *Web) serveLinger(rw *logWriter, r *http.Request, h *host) {
	path := r.URL.Path
	switch path {
	case "/":
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, "Busy server", 60, []string{"/work/1", "/work/2"}))
		return
	case "/work/1", "/work/2":
	default:
		notFound(rw, r)
		return
	}
	hdr := rw.Header()
	hdr.Set("Content-Type", htmlUTF8)
	hdr.Set("Content-Length", strconv.Itoa(LingerBodyBytes))
	rw.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	first := w.smallPage(h, path, "Work "+path[len("/work/"):], LingerSentBytes/4, nil)[:LingerSentBytes]
	if _, err := rw.Write(first); err != nil {
		return
	}
	rw.Flush()
	limit := time.NewTimer(w.cfg.HangLimit)
	defer limit.Stop()
	select {
	case <-r.Context().Done():
	case <-w.closing:
		abort()
	case <-limit.C:
		abort()
	}
	// The client has gone; the work it asked for goes on.
	t := time.NewTimer(w.cfg.LingerFor)
	defer t.Stop()
	select {
	case <-t.C:
	case <-w.closing:
	}
}
