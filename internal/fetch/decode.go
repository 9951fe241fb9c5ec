package fetch

import (
	"bufio"
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
	"github.com/klauspost/compress/zstd"
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
	zstd   sync.Pool // *zstd.Decoder, made by newZstd
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

// zstdMaxWindow is the largest window a zstd frame may ask for. RFC 9659
// limits the "zstd" content coding to 8 MiB and browsers refuse more, so
// a server that wants its pages seen sends no more; a frame that asks for
// more (up to 3.75 TB is valid zstd) is refused before anything of that
// size is allocated.
const zstdMaxWindow = 8 << 20

// newZstd returns a zstd decoder for one stream at a time, bounded in
// memory by zstdMaxWindow (a single-segment frame's window is its content
// size, so WithDecoderMaxMemory bounds that too) and synchronous: with a
// concurrency of 1 it starts no goroutine and decodes one block at a
// time, as the caller reads.
func newZstd() (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(zstdMaxWindow),
		zstd.WithDecoderMaxMemory(zstdMaxWindow),
	)
}

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

// layer is the output of one decoder of a stack of content codings, read
// through a cap: it yields at most left bytes, and then io.EOF, having
// noted in over whether the decoder had more.
type layer struct {
	coding string
	r      io.Reader  // the decoder, as open returned it
	pool   *sync.Pool // where r goes back
	left   int64
	over   bool
	err    error // the first error the decoder returned other than io.EOF
}

func (l *layer) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// One byte more tells a body that ends at the cap from one over
		// it; the decoder does no more work than that byte needs.
		var b [1]byte
		n, err := io.ReadAtLeast(l.r, b[:], 1)
		if n > 0 {
			l.over = true
			return 0, io.EOF
		}
		return 0, l.note(err)
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, l.note(err)
}

func (l *layer) note(err error) error {
	if err != nil && err != io.EOF && l.err == nil {
		l.err = err
	}
	return err
}

// decode undoes the content codings of body, last applied first, with the
// output of every layer capped at limit. With no coding it returns body
// itself. On failure it returns what could be decoded: a prefix of the
// content when the failure is mid-stream, or the bytes as far as they
// could be decoded when a layer could not even start (unknown coding or
// bad header: servers mislabel plain bodies).
//
// The layers are decoded as one stream, each decoder reading the output
// of the one before through its cap, so a stack of codings ("gzip, br")
// holds no intermediate body in memory, and the final output is at most
// limit bytes, whichever layer is the bomb.
func (p *pools) decode(codings []string, body []byte, limit int64) ([]byte, error) {
	if len(body) == 0 {
		return body, nil
	}
	layers := make([]layer, 0, len(codings)) // never grown: Read's receivers point into it
	defer func() {
		for i := range layers {
			p.release(&layers[i])
		}
	}()
	var src flate.Reader = bytes.NewReader(body)
	for i := len(codings) - 1; i >= 0; i-- {
		r, pool, err := p.open(codings[i], src)
		if err != nil {
			cause := fmt.Errorf("content-encoding %s: %w", codings[i], err)
			if i == len(codings)-1 {
				return body, cause
			}
			// The layers before this one are what could be decoded,
			// unless they failed first (and this one for want of input).
			inner, innerErr := p.decode(codings[i+1:], body, limit)
			if innerErr != nil {
				return inner, innerErr
			}
			return inner, cause
		}
		layers = append(layers, layer{coding: codings[i], r: r, pool: pool, left: limit})
		if i > 0 {
			// The decoders want a byte reader (or would wrap one of their
			// own around it), and deflate's header must be peeked at.
			src = bufio.NewReader(&layers[len(layers)-1])
		}
	}
	out, _, _ := p.readCapped(&layers[len(layers)-1], limit, -1)
	// The first layer that went wrong is the cause: the ones after it
	// only ran out of input.
	for i := range layers {
		l := &layers[i]
		switch {
		case l.over:
			return out, fmt.Errorf("content-encoding %s: %w", l.coding, ErrDecodedTooLarge)
		case l.err != nil:
			return out, fmt.Errorf("content-encoding %s: %w", l.coding, l.err)
		}
	}
	return out, nil
}

// open returns a pooled decoder of coding reading src, its header read
// and checked where the coding has one; an error means decoding could not
// even begin: unknown coding or invalid header.
func (p *pools) open(coding string, src flate.Reader) (io.Reader, *sync.Pool, error) {
	switch coding {
	case "gzip", "x-gzip":
		zr, _ := p.gzip.Get().(*gzip.Reader)
		if zr == nil {
			zr = new(gzip.Reader)
		}
		if err := zr.Reset(src); err != nil {
			return nil, nil, err
		}
		return zr, &p.gzip, nil
	case "deflate":
		// RFC 9110 says zlib-wrapped deflate, but many servers send raw
		// deflate (as old IE expected): tell them apart by the zlib header.
		if isZlibHeader(peek(src, 2)) {
			zr, _ := p.zlib.Get().(io.ReadCloser)
			var err error
			if zr == nil {
				zr, err = zlib.NewReader(src)
			} else {
				err = zr.(zlib.Resetter).Reset(src, nil)
			}
			if err != nil {
				return nil, nil, err
			}
			return zr, &p.zlib, nil
		}
		fr, _ := p.flate.Get().(io.ReadCloser)
		if fr == nil {
			return flate.NewReader(src), &p.flate, nil
		}
		_ = fr.(flate.Resetter).Reset(src, nil)
		return fr, &p.flate, nil
	case "br":
		br, _ := p.brotli.Get().(*brotli.Reader)
		if br == nil {
			return brotli.NewReader(src), &p.brotli, nil
		}
		_ = br.Reset(src)
		return br, &p.brotli, nil
	case "zstd":
		// The decoder reads no header before the first Read: check the
		// magic here, so that a mislabelled plain body passes through.
		if !isZstdMagic(peek(src, 4)) {
			return nil, nil, zstd.ErrMagicMismatch
		}
		zd, _ := p.zstd.Get().(*zstd.Decoder)
		if zd == nil {
			var err error
			if zd, err = newZstd(); err != nil {
				return nil, nil, err
			}
		}
		if err := zd.Reset(src); err != nil {
			return nil, nil, err
		}
		return zd, &p.zstd, nil
	}
	return nil, nil, ErrUnsupportedEncoding
}

// release returns l's decoder to its pool, reset onto an empty stream.
func (p *pools) release(l *layer) {
	switch l.pool {
	case &p.gzip:
		_ = l.r.(*gzip.Reader).Reset(strings.NewReader(emptyGzip))
	case &p.zlib:
		_ = l.r.(zlib.Resetter).Reset(strings.NewReader(emptyZlib), nil)
	case &p.flate:
		_ = l.r.(flate.Resetter).Reset(strings.NewReader(""), nil)
	case &p.brotli:
		_ = l.r.(*brotli.Reader).Reset(strings.NewReader(""))
	case &p.zstd:
		_ = l.r.(*zstd.Decoder).Reset(nil) // drops the source; the window stays for the next stream
	}
	l.pool.Put(l.r)
}

// peek returns the first n bytes of src (fewer if it has fewer) without
// consuming them. src is a *bytes.Reader at its start or a *bufio.Reader,
// as decode makes them.
func peek(src flate.Reader, n int) []byte {
	switch r := src.(type) {
	case *bufio.Reader:
		b, _ := r.Peek(n)
		return b
	case *bytes.Reader:
		b := make([]byte, n)
		m, _ := r.ReadAt(b, 0)
		return b[:m]
	}
	return nil
}

// isZstdMagic reports whether b starts a zstd frame or a skippable frame
// (RFC 8878, section 3.1).
func isZstdMagic(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	return string(b) == "\x28\xb5\x2f\xfd" || b[0]&0xf0 == 0x50 && string(b[1:]) == "\x2a\x4d\x18"
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
