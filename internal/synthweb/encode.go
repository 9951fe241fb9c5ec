package synthweb

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// Encodings are the content codings Config.Encoding may name.
var Encodings = []string{"gzip", "deflate", "br", "zstd"}

// encoder compresses whole bodies in one content coding. It is safe for
// concurrent use.
type encoder struct {
	coding string
	zstd   *zstd.Encoder // for "zstd": EncodeAll only, which starts no goroutine
	brotli sync.Pool     // *brotli.Writer: each holds megabytes of tables
}

func newEncoder(coding string) (*encoder, error) {
	e := &encoder{coding: coding}
	switch coding {
	case "gzip", "deflate", "br":
	case "zstd":
		// A window within RFC 9659's 8 MiB, as a server must use for
		// the "zstd" content coding.
		z, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20))
		if err != nil {
			return nil, fmt.Errorf("synthweb: zstd encoder: %w", err)
		}
		e.zstd = z
	default:
		return nil, fmt.Errorf("synthweb: Encoding %q is not one of %q", coding, Encodings)
	}
	return e, nil
}

// encode returns b in e's coding.
func (e *encoder) encode(b []byte) []byte {
	if e.coding == "zstd" {
		return e.zstd.EncodeAll(b, make([]byte, 0, len(b)/2+64))
	}
	var out bytes.Buffer
	switch e.coding {
	case "gzip":
		w := gzip.NewWriter(&out)
		_, _ = w.Write(b) // a bytes.Buffer does not fail
		_ = w.Close()
	case "deflate": // as RFC 9110 says: zlib-wrapped
		w := zlib.NewWriter(&out)
		_, _ = w.Write(b)
		_ = w.Close()
	case "br":
		w, _ := e.brotli.Get().(*brotli.Writer)
		if w == nil {
			// Quality 1: the format a decoder sees is the same as at
			// nginx's 6, and the race detector makes 6 cost seconds.
			w = brotli.NewWriterLevel(&out, 1)
		} else {
			w.Reset(&out)
		}
		_, _ = w.Write(b)
		_ = w.Close()
		w.Reset(nil)
		e.brotli.Put(w)
	}
	return out.Bytes()
}
