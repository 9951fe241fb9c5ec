package fetch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
)

// ErrDecodedTooLarge is the DecodeErr (wrapped) of a response whose decoded
// body would exceed MaxBodyBytes; Decoded then holds the first MaxBodyBytes.
var ErrDecodedTooLarge = errors.New("decoded body exceeds the size cap")

// ErrUnsupportedEncoding is the DecodeErr (wrapped) of a response with a
// Content-Encoding this package cannot decode; Decoded then holds the bytes
// as far as they could be decoded (the Body itself if no layer could be).
var ErrUnsupportedEncoding = errors.New("unsupported content encoding")

// chunkSize is the size of the pooled buffers that bodies of unknown length
// are read into before being copied out at their exact size.
const chunkSize = 32 << 10

// pools holds what Gets reuse: read buffers and decompressors (whose tables
// cost tens of kilobytes each).
type pools struct {
	chunks sync.Pool // *[]byte of len chunkSize
	gzip   sync.Pool // *gzip.Reader
	flate  sync.Pool // io.ReadCloser that is a flate.Resetter
	zlib   sync.Pool // io.ReadCloser that is a zlib.Resetter
	brotli sync.Pool // *brotli.Reader
}

// readCapped reads r to EOF, keeping at most limit bytes. over reports that
// r had more than limit bytes; reading stops one byte past the limit. hint
// is the announced length, or negative if unknown. On error, b holds what
// was read.
//
// A hint within the cap is trusted for the allocation: the body is read
// straight into a buffer of that size. Otherwise the body is read into
// pooled chunks and copied out once at its exact size, so that a body costs
// its own size in garbage, not the sum of a doubling series.
func (p *pools) readCapped(r io.Reader, limit, hint int64) (b []byte, over bool, err error) {
	if hint > 0 && hint <= limit {
		b = make([]byte, hint)
		for n := 0; ; {
			if n == len(b) {
				// Full: what is left (normally just EOF) goes to chunks.
				return p.readChunks(r, b, limit)
			}
			m, err := r.Read(b[n:])
			n += m
			if err == io.EOF {
				return b[:n], false, nil
			}
			if err != nil {
				return b[:n], false, err
			}
		}
	}
	return p.readChunks(r, nil, limit)
}

// readChunks reads the rest of r after head into pooled chunks, as
// readCapped.
func (p *pools) readChunks(r io.Reader, head []byte, limit int64) (b []byte, over bool, err error) {
	var chunks []*[]byte
	defer func() {
		for _, c := range chunks {
			p.chunks.Put(c)
		}
	}()
	total := int64(len(head))
	fill := chunkSize // bytes used in the last chunk; "full" to start
	for {
		if fill == chunkSize {
			c, _ := p.chunks.Get().(*[]byte)
			if c == nil {
				buf := make([]byte, chunkSize)
				c = &buf
			}
			chunks = append(chunks, c)
			fill = 0
		}
		c := *chunks[len(chunks)-1]
		n, rerr := r.Read(c[fill:min(chunkSize, int64(fill)+limit+1-total)])
		fill += n
		total += int64(n)
		if total > limit {
			over = true
			break
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			err = rerr
			break
		}
	}
	size := min(total, limit)
	if int64(len(head)) >= size {
		return head[:size], over, err // nothing to add: no copy
	}
	b = make([]byte, size)
	k := copy(b, head)
	for i, c := range chunks {
		seg := *c
		if i == len(chunks)-1 {
			seg = seg[:fill]
		}
		k += copy(b[k:], seg)
	}
	return b, over, err
}

// Pooled decoders are reset onto these empty streams after use, so that
// the pool does not keep the last body they read alive. (A reset onto a
// stream with a bad header would leave the old source in the decompressor.)
const (
	emptyGzip = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	emptyZlib = "\x78\x9c\x03\x00\x00\x00\x00\x01"
)

// contentEncodings lists the codings of a Content-Encoding header in the
// order they were applied, without "identity".
func contentEncodings(values []string) []string {
	var out []string
	for _, v := range values {
		for _, c := range strings.Split(v, ",") {
			c = strings.ToLower(strings.TrimSpace(c))
			if c != "" && c != "identity" {
				out = append(out, c)
			}
		}
	}
	return out
}

// decode undoes the content codings of body, last applied first, with the
// output of every layer capped at limit. With no coding it returns body
// itself. On failure it returns what could be decoded.
func (p *pools) decode(codings []string, body []byte, limit int64) ([]byte, error) {
	cur := body
	if len(body) == 0 {
		return body, nil
	}
	for i := len(codings) - 1; i >= 0; i-- {
		next, started, err := p.decodeOne(codings[i], cur, limit)
		if err != nil {
			if !started { // unknown coding or bad header: pass the bytes on
				next = cur
			}
			return next, fmt.Errorf("content-encoding %s: %w", codings[i], err)
		}
		cur = next
	}
	return cur, nil
}

// decodeOne undoes one coding. started is false if decoding could not even
// begin: unknown coding or invalid header.
func (p *pools) decodeOne(coding string, in []byte, limit int64) (out []byte, started bool, err error) {
	src := bytes.NewReader(in)
	const hint = -1 // the decoded size is unknown
	var over bool
	switch coding {
	case "gzip", "x-gzip":
		zr, _ := p.gzip.Get().(*gzip.Reader)
		if zr == nil {
			zr = new(gzip.Reader)
		}
		if err = zr.Reset(src); err != nil {
			return nil, false, err
		}
		out, over, err = p.readCapped(zr, limit, hint)
		_ = zr.Reset(strings.NewReader(emptyGzip))
		p.gzip.Put(zr)
	case "deflate":
		// RFC 9110 says zlib-wrapped deflate, but many servers send raw
		// deflate (as old IE expected): tell them apart by the zlib header.
		if isZlibHeader(in) {
			zr, _ := p.zlib.Get().(io.ReadCloser)
			if zr == nil {
				zr, err = zlib.NewReader(src)
			} else {
				err = zr.(zlib.Resetter).Reset(src, nil)
			}
			if err != nil {
				return nil, false, err
			}
			out, over, err = p.readCapped(zr, limit, hint)
			_ = zr.(zlib.Resetter).Reset(strings.NewReader(emptyZlib), nil)
			p.zlib.Put(zr)
		} else {
			fr, _ := p.flate.Get().(io.ReadCloser)
			if fr == nil {
				fr = flate.NewReader(src)
			} else {
				_ = fr.(flate.Resetter).Reset(src, nil)
			}
			out, over, err = p.readCapped(fr, limit, hint)
			_ = fr.(flate.Resetter).Reset(strings.NewReader(""), nil)
			p.flate.Put(fr)
		}
	case "br":
		br, _ := p.brotli.Get().(*brotli.Reader)
		if br == nil {
			br = brotli.NewReader(src)
		} else {
			_ = br.Reset(src)
		}
		out, over, err = p.readCapped(br, limit, hint)
		_ = br.Reset(strings.NewReader(""))
		p.brotli.Put(br)
	default:
		return nil, false, ErrUnsupportedEncoding
	}
	if err == nil && over {
		err = ErrDecodedTooLarge
	}
	return out, true, err
}

// isZlibHeader reports whether b starts with a valid zlib (RFC 1950) header
// for deflate: CM 8, a window of at most 32 KiB, and a valid check sum.
func isZlibHeader(b []byte) bool {
	if len(b) < 2 {
		return false
	}
	cmf, flg := b[0], b[1]
	return cmf&0x0f == 8 && cmf>>4 <= 7 && (uint16(cmf)<<8|uint16(flg))%31 == 0
}
