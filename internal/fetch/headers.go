package fetch

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// A HeaderSource gives the header fields an operator asked to send to a
// host: a token a site wants, a language.
type HeaderSource interface {
	// HeaderFor returns the fields to add to a request for u (pages,
	// robots.txt, requisites, a rendered page's requests alike), nil for
	// none. It must return only fields meant for u's host, each checked
	// by CheckHeader, and must not change what it returned; it is called
	// for every request, from many goroutines at once.
	HeaderFor(u *url.URL) http.Header
}

// reservedHeaders are the fields an operator may not set, and why.
var reservedHeaders = map[string]string{
	"Host":              "the URL's authority is sent",
	"Cookie":            "give cookies in a cookies file (--cookies), which keeps each to its domain",
	"User-Agent":        "it is the crawl's (--user-agent), whose first token chooses the robots.txt group",
	"Accept-Encoding":   "weft asks for the codings it decodes",
	"Content-Length":    "weft sends a GET without a body",
	"Transfer-Encoding": "weft sends a GET without a body",
	"Connection":        "the connection is weft's to manage",
	"Keep-Alive":        "the connection is weft's to manage",
	"Proxy-Connection":  "the connection is weft's to manage",
	"Te":                "the connection is weft's to manage",
	"Trailer":           "weft sends a GET without a body",
	"Upgrade":           "the connection is weft's to manage",
	"Expect":            "weft sends a GET without a body",
}

// CheckHeader reports whether a field named name with value may be sent
// to a host an operator gave it for. Its error names the field, never the
// value, which may be a secret.
func CheckHeader(name, value string) error {
	if !httpguts.ValidHeaderFieldName(name) {
		return fmt.Errorf("header %q: not a header name", name)
	}
	if why, ok := reservedHeaders[http.CanonicalHeaderKey(name)]; ok {
		return fmt.Errorf("header %q cannot be set: %s", name, why)
	}
	if !httpguts.ValidHeaderFieldValue(value) {
		return fmt.Errorf("header %q: its value has a character a header cannot carry (a line break, a control character)", name)
	}
	return nil
}

// ParseHeader reads a "Name: value" field as curl's -H takes it, checked
// by CheckHeader. Its error does not repeat the value.
func ParseHeader(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return "", "", fmt.Errorf("want 'Name: value', as in 'Authorization: Bearer ...'")
	}
	value = strings.TrimSpace(value)
	if err := CheckHeader(name, value); err != nil {
		return "", "", err
	}
	return http.CanonicalHeaderKey(name), value, nil
}
