package synthweb

import (
	"net/http"
	"strconv"
	"strings"
)

// The failing hosts fail the ways that decide when a crawl ends: a server
// that asks to come back in an hour, one that refuses without saying
// when, one that gets there slowly, a robots.txt that fails. They are
// started only when Config.HostileKinds names them, after every other
// kind. Each "/" is a small page linking to /f/1 ... /f/FailingPages.
const (
	// FailOutage answers robots.txt 404 and every page 503 with
	// "Retry-After: 3600": a site down for maintenance for an hour.
	FailOutage = "outage"
	// FailStorm429Bare answers robots.txt 404 and every page 429 Too Many
	// Requests without Retry-After; FailStorm503Bare the same with 503.
	FailStorm429Bare = "storm-429-bare"
	FailStorm503Bare = "storm-503-bare"
	// FailFlaky answers robots.txt 404, then every other request 503
	// without Retry-After and the rest as the page asked for: a host a
	// crawl gets through slowly.
	FailFlaky = "flaky"
	// FailRobots500 answers robots.txt 500 without Retry-After, and
	// FailRobots429 answers it 429 with "Retry-After: 3600": per RFC 9309
	// both hosts are completely disallowed while it fails. Their pages,
	// never to be asked for, are small pages.
	FailRobots500 = "robots-500"
	FailRobots429 = "robots-429"
)

// FailingPages is the number of pages each failing host's "/" links to.
const FailingPages = 5

// isFailing reports whether kind is one of the failing hosts.
func isFailing(kind string) bool {
	switch kind {
	case FailOutage, FailStorm429Bare, FailStorm503Bare, FailFlaky, FailRobots500, FailRobots429:
		return true
	}
	return false
}

// failingRobots is how a failing host's robots.txt fails, as the
// RobotsKind that its ground truth (disallowAll) is judged by.
func failingRobots(kind string) RobotsKind {
	if kind == FailRobots500 || kind == FailRobots429 {
		return RobotsServerError
	}
	return RobotsNotFound
}

// serveFailing answers a failing host.
func (w *Web) serveFailing(rw *logWriter, r *http.Request, h *host) {
	path := r.URL.Path
	if path == robotsPath {
		switch h.hostile {
		case FailRobots500:
			writeBody(rw, r, http.StatusInternalServerError, "text/html; charset=utf-8", serverErrorBody)
		case FailRobots429:
			rw.Header().Set("Retry-After", "3600")
			writeBody(rw, r, http.StatusTooManyRequests, "text/plain; charset=utf-8", "Too Many Requests\n")
		default:
			notFound(rw, r)
		}
		return
	}
	switch h.hostile {
	case FailOutage:
		rw.Header().Set("Retry-After", "3600")
		writeBody(rw, r, http.StatusServiceUnavailable, "text/html; charset=utf-8", unavailableBody)
		return
	case FailStorm429Bare:
		writeBody(rw, r, http.StatusTooManyRequests, "text/plain; charset=utf-8", "Too Many Requests\n")
		return
	case FailStorm503Bare:
		writeBody(rw, r, http.StatusServiceUnavailable, "text/html; charset=utf-8", unavailableBody)
		return
	case FailFlaky:
		if h.flaky.Add(1)%2 == 1 {
			writeBody(rw, r, http.StatusServiceUnavailable, "text/html; charset=utf-8", unavailableBody)
			return
		}
	}
	switch {
	case path == "/":
		hrefs := make([]string, FailingPages)
		for i := range hrefs {
			hrefs[i] = "/f/" + strconv.Itoa(i+1)
		}
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, "Failing", 40, hrefs))
	case strings.HasPrefix(path, "/f/") && validFailingPage(path[len("/f/"):]):
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, "Page "+path[len("/f/"):], 40, nil))
	default:
		notFound(rw, r)
	}
}

func validFailingPage(n string) bool {
	i, err := strconv.Atoi(n)
	return err == nil && i >= 1 && i <= FailingPages && strconv.Itoa(i) == n
}
