package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Kind classifies why a Get returned no response. Callers decide retries and
// label metrics by Kind, never by the text of an error.
type Kind int

// The kinds of error. Their String values are stable: they are metric labels.
const (
	// KindUnknown is the kind of errors that did not come from this package.
	KindUnknown Kind = iota
	// KindDNS: the host name could not be resolved (not found, server
	// failure or a lookup that took longer than ConnectTimeout).
	KindDNS
	// KindRefused: the SSRF guard refused every address of the host; no
	// connection was attempted.
	KindRefused
	// KindConnect: the TCP connection could not be made, or the server
	// closed or reset it before sending a response.
	KindConnect
	// KindTimeout: a deadline passed before the response headers arrived
	// (connect, TLS handshake, response headers, silence, or Timeout).
	KindTimeout
	// KindTLS: the TLS handshake failed (bad certificate, not TLS, alert).
	KindTLS
	// KindProtocol: the server answered with something that is not a valid
	// HTTP response, or with headers larger than MaxHeaderBytes.
	KindProtocol
	// KindCanceled: the caller's context was canceled or passed its own
	// deadline.
	KindCanceled
	// KindBadURL: the URL or a caller header cannot be requested (parse
	// error, scheme other than http/https, missing host, invalid header).
	KindBadURL
)

// String returns the stable lowercase name of k.
func (k Kind) String() string {
	switch k {
	case KindDNS:
		return "dns"
	case KindRefused:
		return "refused"
	case KindConnect:
		return "connect"
	case KindTimeout:
		return "timeout"
	case KindTLS:
		return "tls"
	case KindProtocol:
		return "protocol"
	case KindCanceled:
		return "canceled"
	case KindBadURL:
		return "bad_url"
	default:
		return "unknown"
	}
}

// Error is the error returned by Get when there is no response at all.
type Error struct {
	Kind Kind
	URL  string
	Err  error
	// Unsent says the request never reached the server: the failure came
	// before there was a connection to send it on (DNS, the address
	// guard, connecting, the TLS handshake), so the server holds no
	// request of the client's that it might still be working on.
	Unsent bool
}

// Unsent reports whether err is an *Error whose request never reached
// the server (Error.Unsent).
func Unsent(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Unsent
}

// Error names the URL and the cause once: "fetch https://h/: dial tcp
// 192.0.2.1:443: connect: connection refused". The kind is not repeated
// in the text, since the cause names it and callers that print both
// (metric labels, the fetch log's outcome) have it from Kind.
func (e *Error) Error() string {
	if e.Err == nil {
		return "fetch " + e.URL + ": " + e.Kind.String()
	}
	return "fetch " + e.URL + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the Kind of the first *Error in err's chain, or KindUnknown.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindUnknown
}

// NoSuchHost reports whether err is a DNS answer that the host name has
// no address (NXDOMAIN, or no record of the kind asked), rather than a
// resolver that failed or timed out: asked again soon, it answers the
// same.
func NoSuchHost(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de) && de.IsNotFound
}

// dialError carries the kind decided where the failure happened (DNS,
// guard, connect, TLS) through net/http, which returns dial errors as is.
type dialError struct {
	kind Kind
	err  error
}

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// handshakeError is a TLS handshake that failed, its text the cause
// once: "certificate signed by unknown authority (TLS handshake with
// 192.0.2.1:443)". crypto/tls and crypto/x509 each put their name before
// their errors, and a failed verification is one inside the other, so
// that their text alone reads "tls: failed to verify certificate: x509:
// certificate signed by unknown authority"; and a caller may put the
// kind before it too (the crawl's summary: "tls: fetch ...").
type handshakeError struct {
	addr string // the address the handshake was with, ip:port
	err  error
}

func (e *handshakeError) Error() string {
	return handshakeCause(e.err) + " (TLS handshake with " + e.addr + ")"
}

func (e *handshakeError) Unwrap() error { return e.err }

// handshakeCause is the text of a handshake's error without the names of
// the packages it passed through.
func handshakeCause(err error) string {
	var (
		cv *tls.CertificateVerificationError
		op *net.OpError
		rh tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &cv) && cv.Err != nil:
		return strings.TrimPrefix(cv.Err.Error(), "x509: ")
	case errors.As(err, &op) && op.Op == "remote error" && op.Err != nil:
		// An alert the server sent, which crypto/tls writes "remote
		// error: tls: protocol version not supported".
		return "refused by the server: " + strings.TrimPrefix(op.Err.Error(), "tls: ")
	case errors.As(err, &rh):
		return "the server's answer is not TLS"
	}
	return strings.TrimPrefix(err.Error(), "tls: ")
}

// overTime is a step cut by one of the Config's time bounds: it says
// which, where the context's error it wraps ("context deadline
// exceeded") would not.
type overTime struct {
	what  string // "no response", "not complete"
	limit time.Duration
	err   error
}

func (e *overTime) Error() string { return e.what + " within " + e.limit.String() }
func (e *overTime) Unwrap() error { return e.err }

// classify turns an error from http.Client.Do into an *Error. parent is the
// caller's context and req the per-Get context derived from it with
// timeout; gotConn tells whether a connection had been obtained.
func classify(rawURL string, err error, parent, req context.Context, timeout time.Duration, gotConn bool) *Error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its text repeats the method and URL
	}
	kind := func() Kind {
		if parent.Err() != nil {
			return KindCanceled
		}
		if req.Err() != nil {
			err = &overTime{"no response", timeout, err}
			return KindTimeout
		}
		var de *dialError
		if errors.As(err, &de) {
			err = de.err
			return de.kind
		}
		if isTLSError(err) {
			return KindTLS
		}
		if isTimeout(err) {
			return KindTimeout
		}
		if !gotConn || isConnBroken(err) {
			return KindConnect
		}
		return KindProtocol
	}()
	return &Error{Kind: kind, URL: rawURL, Err: err, Unsent: !gotConn}
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout() || errors.Is(err, context.DeadlineExceeded)
}

func isTLSError(err error) bool {
	var (
		rh  tls.RecordHeaderError
		al  tls.AlertError
		cv  *tls.CertificateVerificationError
		ua  x509.UnknownAuthorityError
		hn  x509.HostnameError
		ci  x509.CertificateInvalidError
		ech *tls.ECHRejectionError
	)
	return errors.As(err, &rh) || errors.As(err, &al) || errors.As(err, &cv) ||
		errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci) || errors.As(err, &ech)
}

// isConnBroken reports errors meaning the peer went away rather than sent
// something malformed.
func isConnBroken(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED)
}
