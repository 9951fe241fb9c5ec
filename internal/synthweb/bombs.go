package synthweb

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// Names of the bomb hosts in the codings besides gzip, started only when
// Config.HostileKinds names them. Like HostileGzipBomb, each answers "/"
// with a small body (at most 128 KiB) in its coding that decodes to far more
// than a body cap, spaces and nothing else: BrotliBombBytes and
// ZstdBombBytes. robots.txt and every other path are 404. A crawler must
// cut each at its cap on the decoded body, in memory as in time.
const (
	BombBrotli = "br-bomb"
	BombZstd   = "zstd-bomb"
)

// What the bombs decode to. A brotli stream cannot be made by repeating
// a small one, as gzip members and zstd frames can, and compressing 1 GiB
// would cost the web seconds at start; 128 MiB is still many caps.
const (
	BrotliBombBytes = 128 << 20
	ZstdBombBytes   = 1 << 30
)

// prepareBomb builds the body of the bomb host of kind.
func (w *Web) prepareBomb(kind string) error {
	spaces := bytes.Repeat([]byte{' '}, 1<<20)
	switch kind {
	case BombBrotli:
		var b bytes.Buffer
		bw := brotli.NewWriterLevel(&b, 1)
		for range BrotliBombBytes / len(spaces) {
			_, _ = bw.Write(spaces) // a bytes.Buffer does not fail
		}
		if err := bw.Close(); err != nil {
			return fmt.Errorf("synthweb: build brotli bomb: %w", err)
		}
		w.brotliBomb = b.Bytes()
	case BombZstd:
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		if err != nil {
			return fmt.Errorf("synthweb: build zstd bomb: %w", err)
		}
		frame := enc.EncodeAll(spaces, nil)
		_ = enc.Close()
		w.zstdBomb = bytes.Repeat(frame, ZstdBombBytes/len(spaces))
	}
	return nil
}

// serveBomb answers a bomb host.
func (w *Web) serveBomb(rw *logWriter, r *http.Request, h *host) {
	if r.URL.Path != "/" {
		writeBody(rw, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundBody)
		return
	}
	body, coding := w.brotliBomb, "br"
	if h.hostile == BombZstd {
		body, coding = w.zstdBomb, "zstd"
	}
	hdr := rw.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Content-Encoding", coding)
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	rw.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = rw.Write(body) // a write error means the client left
	}
}
