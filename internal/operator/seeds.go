package operator

import (
	"errors"
	"strings"

	whatwgerrors "github.com/nlnwa/whatwg-url/errors"

	"github.com/weft-crawler/weft/internal/api"
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/scope"
)

// rejectCodes are the API's codes of the reasons that have no finer one,
// and their messages.
var rejectCodes = map[string][2]string{
	judge.Forbidden:   {"forbidden", "its address is one the SSRF guard refuses (loopback, private, link-local, metadata)"},
	judge.Filter:      {"filtered", "not fetched as a page (a /robots.txt is read for its host's rules only)"},
	judge.Scope:       {"scope", "refused by --exclude, or matched by no --include"},
	judge.Repeats:     {"repeats", "a path segment repeats too often: the mark of a crawler trap"},
	judge.Robots:      {"robots", "disallowed by its host's robots.txt"},
	judge.Unreachable: {"robots_unreachable", "its host's robots.txt could not be fetched (5xx, 429, a network or TLS error): the host is not crawled"},
	judge.CrawlDelay:  {"crawl_delay", "its host's robots.txt asks for a longer Crawl-delay than the crawl waits (--max-crawl-delay): the host is not crawled"},
	judge.Policy:      {"policy", "disallowed by the operator's policy for its host"},
	judge.Trap:        {"trap", "its host, or the directory it is under, is cut off as a crawler trap (mostly near-duplicate pages)"},
	judge.HostCap:     {"host_cap", "its host has as many URLs as the crawl accepts (--max-urls-per-host, or its policy's max_urls)"},
	judge.Pattern:     {"pattern", "its host has as many URLs of this pattern as the crawl accepts"},
	judge.GaveUp:      {"gave_up", "its host was given up after too many failures"},
	judge.Seen:        {"seen", "already accepted"},
}

// verdictOf is v in the API's words: for a URL refused, a stable code and
// a message that name what is wrong with it.
func verdictOf(v crawl.Verdict) api.Verdict {
	r := api.Verdict{URL: v.URL, Reason: v.Reason}
	var ce *canon.Error
	var fe *scope.FilterError
	var se *crawl.SeedError
	switch {
	case v.Reason == "":
		// accepted
	case errors.As(v.Err, &fe):
		r.Code, r.Message = filterCodes[fe.Cause], fe.Detail
		if r.Code == "" {
			r.Code = "filtered"
		}
	case errors.As(v.Err, &se):
		// The message names the URL and what a seed must be.
		r.Code, r.Message = "bad_url", se.Explain()
		if errors.Is(se, crawl.ErrNotHTTP) {
			r.Code = "bad_scheme"
		} else if errors.As(se, &ce) {
			r.Code = urlErrorCode(ce.Err)
		}
	case v.Reason == judge.Invalid:
		r.Code, r.Message = "bad_url", "not a URL"
	default:
		c, ok := rejectCodes[v.Reason]
		if !ok {
			c = [2]string{strings.ReplaceAll(v.Reason, "-", "_"), "refused: " + v.Reason}
		}
		r.Code, r.Message = c[0], c[1]
	}
	return r
}

// filterCodes are the codes of scope.FilterError's causes.
var filterCodes = map[string]string{
	scope.CauseScheme: "bad_scheme", scope.CauseTooLong: "too_long", scope.CauseParams: "too_many_params", scope.CauseExtension: "extension",
}

// urlErrorCode is the code of why the canonicaliser refused a URL.
func urlErrorCode(err error) string {
	switch {
	case errors.Is(err, canon.ErrEmpty):
		return "empty"
	case errors.Is(err, canon.ErrTooLong):
		return "too_long"
	case errors.Is(err, canon.ErrTooManySegments):
		return "too_many_segments"
	}
	switch whatwgerrors.Type(err) {
	case whatwgerrors.MissingSchemeNonRelativeURL:
		return "no_scheme"
	case whatwgerrors.PortOutOfRange, whatwgerrors.PortInvalid, whatwgerrors.PortMissing:
		return "bad_port"
	case whatwgerrors.HostMissing, whatwgerrors.DomainToASCII, whatwgerrors.DomainToUnicode, whatwgerrors.DomainInvalidCodePoint,
		whatwgerrors.HostInvalidCodePoint, whatwgerrors.IPv4EmptyPart, whatwgerrors.IPv4TooManyParts, whatwgerrors.IPv4NonNumericPart,
		whatwgerrors.IPv4NonDecimalPart, whatwgerrors.IPv4OutOfRangePart, whatwgerrors.IPv6Unclosed, whatwgerrors.IPv6InvalidCompression,
		whatwgerrors.IPv6TooManyPieces, whatwgerrors.IPv6MultipleCompression, whatwgerrors.IPv6InvalidCodePoint, whatwgerrors.IPv6TooFewPieces,
		whatwgerrors.IPv4InIPv6TooManyPieces, whatwgerrors.IPv4InIPv6InvalidCodePoint, whatwgerrors.IPv4InIPv6OutOfRangePart,
		whatwgerrors.IPv4InIPv6TooFewParts:
		return "bad_host"
	}
	return "bad_url"
}
