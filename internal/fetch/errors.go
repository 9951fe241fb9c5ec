package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/url"
	"syscall"
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

func (e *Error) Error() string {
	msg := "fetch " + e.URL + ": " + e.Kind.String()
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
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

// dialError carries the kind decided where the failure happened (DNS,
// guard, connect, TLS) through net/http, which returns dial errors as is.
type dialError struct {
	kind Kind
	err  error
}

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// classify turns an error from http.Client.Do into an *Error. parent is the
// caller's context and req the per-Get context derived from it with Timeout;
// gotConn tells whether a connection had been obtained.
func classify(rawURL string, err error, parent, req context.Context, gotConn bool) *Error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its text repeats the method and URL
	}
	kind := func() Kind {
		if parent.Err() != nil {
			return KindCanceled
		}
		if req.Err() != nil {
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
