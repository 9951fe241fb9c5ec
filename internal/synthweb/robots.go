package synthweb

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ProductToken is the crawler's robots.txt product token. Disallowed and
// HostInfo.CrawlDelay are computed for it.
const ProductToken = "weft"

// RobotsKind selects how a host answers /robots.txt.
type RobotsKind int

const (
	// RobotsRules serves a "User-agent: *" group with Disallow, Allow and a
	// "$"-anchored wildcard rule, plus a Sitemap line.
	RobotsRules RobotsKind = iota
	// RobotsAgentGroup serves a "*" group, a "weftbot-other" group that
	// disallows everything (it must not apply to "weft": product tokens are
	// matched whole, not by prefix) and a group for "weft" with different
	// rules, including an Allow/Disallow tie that Allow must win.
	RobotsAgentGroup
	// RobotsCrawlDelay serves rules whose applicable group declares
	// Config.CrawlDelay.
	RobotsCrawlDelay
	// RobotsNotFound answers 404: no rules, everything allowed.
	RobotsNotFound
	// RobotsServerError answers 503: per RFC 9309 the host must be treated
	// as completely disallowed.
	RobotsServerError
	// RobotsTimeout never answers (until Config.HangLimit or Close, when the
	// connection is dropped without a response): unreachable, so per
	// RFC 9309 completely disallowed.
	RobotsTimeout
	// RobotsRedirect answers with a chain of two 301 redirects on the same
	// host ending at the RobotsRules file, whose rules apply.
	RobotsRedirect
	// RobotsRedirectLoop answers with a cycle of seven 301 redirects that
	// never reaches a file: more than five hops means unavailable, which
	// means no rules.
	RobotsRedirectLoop
	// RobotsNone answers 200 with an empty file: no rules.
	RobotsNone
	// RobotsBOM serves the RobotsRules file behind a UTF-8 byte order mark,
	// which must not hide its first line.
	RobotsBOM
	// RobotsCROnly serves the RobotsRules file with old Mac line endings
	// (CR alone).
	RobotsCROnly
	// RobotsLarge serves a file over 500 KiB: a "*" group with RobotsRules'
	// rules, comments past the 500 KiB a crawler must read (RFC 9309
	// §2.5), and then "Disallow: /", which weft does not read: it parses
	// the first 500 KiB and no further.
	RobotsLarge
	// RobotsRulesFirst serves "Disallow: /a/" before any user-agent line
	// (it belongs to no group and applies to no one), then the RobotsRules
	// group.
	RobotsRulesFirst
	// RobotsEncoded serves rules written in another form than the URLs
	// they match (RFC 9309 §2.2.2): "/%61/c/" for /a/c/ pages, raw UTF-8
	// "/café/" for the %-encoded page /caf%C3%A9/menu, and "/%7Euser/" for
	// /~user/home. Its hosts carry those pages, and look-alikes that are
	// allowed.
	RobotsEncoded

	numRobotsKinds
)

// NumRobotsKinds is the number of RobotsKinds: they are 0 to NumRobotsKinds-1.
const NumRobotsKinds = int(numRobotsKinds)

// DefaultRobotsKinds is the cycle used when Config.RobotsKinds is nil.
func DefaultRobotsKinds() []RobotsKind {
	return []RobotsKind{
		RobotsRules, RobotsAgentGroup, RobotsCrawlDelay, RobotsNotFound, RobotsServerError,
		RobotsTimeout, RobotsRedirect, RobotsRedirectLoop, RobotsRules, RobotsNone,
		RobotsBOM, RobotsCROnly, RobotsLarge, RobotsRulesFirst, RobotsEncoded,
	}
}

func (k RobotsKind) String() string {
	switch k {
	case RobotsRules:
		return "rules"
	case RobotsAgentGroup:
		return "agent-group"
	case RobotsCrawlDelay:
		return "crawl-delay"
	case RobotsNotFound:
		return "not-found"
	case RobotsServerError:
		return "server-error"
	case RobotsTimeout:
		return "timeout"
	case RobotsRedirect:
		return "redirect"
	case RobotsRedirectLoop:
		return "redirect-loop"
	case RobotsNone:
		return "none"
	case RobotsBOM:
		return "bom"
	case RobotsCROnly:
		return "cr-only"
	case RobotsLarge:
		return "large"
	case RobotsRulesFirst:
		return "rules-first"
	case RobotsEncoded:
		return "encoded"
	}
	return "RobotsKind(" + strconv.Itoa(int(k)) + ")"
}

// Paths of the robots.txt redirect hops.
const (
	robotsPath          = "/robots.txt"
	robotsRedirectHop1  = "/robots/hop-1"
	robotsRedirectFinal = "/robots/final.txt"
	robotsLoopPrefix    = "/robots/loop-"
	robotsLoopHops      = 6 // loop-1..loop-6, then back to /robots.txt: 7 hops per cycle
	sitemapPath         = "/sitemap.xml"
)

// rule is one Allow or Disallow line. pattern is in the form the pages'
// paths are (canonical, %-encoded), for allowed; written, if set, is how the
// file spells it, an equivalent form a crawler must see through.
type rule struct {
	allow   bool
	pattern string
	written string
}

// text is the rule's value as the file spells it.
func (r rule) text() string {
	if r.written != "" {
		return r.written
	}
	return r.pattern
}

// robotsParseLimit is how much of a robots.txt weft parses: the 500 KiB
// RFC 9309 §2.5 asks every crawler to read.
const robotsParseLimit = 500 << 10

// group is one robots.txt group: its user-agent lines, rules and optional
// crawl delay.
type group struct {
	agents     []string
	rules      []rule
	crawlDelay time.Duration
}

// robotsFile is the data a robots.txt is rendered from. Disallowed is
// computed from this data, never by parsing the rendered text, so a bug in
// rendering cannot hide a bug in the crawler's parser.
type robotsFile struct {
	groups   []group
	sitemaps []string

	// How the file is written, which a parser must see through.
	bom     bool   // a UTF-8 byte order mark first
	lineEnd string // "\n" if empty
	orphans []rule // before any user-agent line: they belong to no group
	// past, if set, is a line written after comments that push it beyond
	// robotsParseLimit, in the last group: never read, never applied.
	past *rule
}

// robotsFileFor returns the file served (directly or at the end of a
// redirect chain) by a host of the given kind, or nil when the kind serves
// no file.
func robotsFileFor(kind RobotsKind, authority string, crawlDelay time.Duration) *robotsFile {
	sitemap := "http://" + authority + sitemapPath
	switch kind {
	case RobotsRules, RobotsRedirect:
		return &robotsFile{
			groups: []group{{
				agents: []string{"*"},
				rules: []rule{
					{false, "/private/", ""},
					{true, "/private/open", ""},
					{false, "/*.cgi$", ""},
				},
			}},
			sitemaps: []string{sitemap},
		}
	case RobotsAgentGroup:
		return &robotsFile{groups: []group{
			{
				agents: []string{"*"},
				rules:  []rule{{false, "/private/", ""}, {false, "/list", ""}},
			},
			{
				// Listed before the weft group so that a crawler that takes
				// the first group whose name starts with its token is caught.
				agents:     []string{"weftbot-other"},
				rules:      []rule{{false, "/", ""}},
				crawlDelay: 30 * time.Second,
			},
			{
				agents: []string{"otherbot", ProductToken},
				rules: []rule{
					{true, "/private/", ""},
					{false, "/a/", ""},
					{true, "/a/b/", ""},
					{false, "/p/1", ""},
					{false, "/list", ""},
					{true, "/list", ""},
					{false, "/*.cgi$", ""},
				},
			},
		}}
	case RobotsCrawlDelay:
		return &robotsFile{
			groups: []group{{
				agents:     []string{"*"},
				rules:      []rule{{false, "/private/", ""}, {true, "/private/open", ""}},
				crawlDelay: crawlDelay,
			}},
			sitemaps: []string{sitemap},
		}
	case RobotsNone:
		return &robotsFile{}
	case RobotsBOM, RobotsCROnly, RobotsLarge, RobotsRulesFirst:
		f := robotsFileFor(RobotsRules, authority, crawlDelay)
		switch kind {
		case RobotsBOM:
			f.bom = true
		case RobotsCROnly:
			f.lineEnd = "\r"
		case RobotsLarge:
			f.past = &rule{false, "/", ""}
		case RobotsRulesFirst:
			f.orphans = []rule{{false, "/a/", ""}}
		}
		return f
	case RobotsEncoded:
		return &robotsFile{groups: []group{{
			agents: []string{"*"},
			rules: []rule{
				{false, "/a/c/", "/%61/c/"},
				{false, encodedPagePath, "/caf\u00e9/"},
				{false, "/~user/", "/%7Euser/"},
			},
		}}}
	}
	return nil
}

// The pages of a RobotsEncoded host that its rules single out, and their
// allowed look-alikes.
const (
	encodedPagePath = "/caf%C3%A9/"
	encodedPage     = encodedPagePath + "menu"
	encodedLookLike = "/cafe/menu"
	tildePage       = "/~user/home"
	tildeLookLike   = "/~other/home"
	// encodedLetterPage is always there for "/%61/c/" to disallow; the
	// random families may add more.
	encodedLetterPage = "/a/c/encoded-1.html"
)

// render writes the file the way people do: comments, blank lines between
// groups, consecutive user-agent lines sharing a group; and with the quirks
// the file asks for.
func (f *robotsFile) render(hostName string) []byte {
	if len(f.groups) == 0 && len(f.sitemaps) == 0 {
		return nil // RobotsNone: an empty 200
	}
	nl := f.lineEnd
	if nl == "" {
		nl = "\n"
	}
	var b strings.Builder
	if f.bom {
		b.WriteString("\uFEFF")
	}
	fmt.Fprintf(&b, "# robots.txt for %s%s# generated by synthweb%s", hostName, nl, nl)
	writeRule := func(r rule) {
		if r.allow {
			fmt.Fprintf(&b, "Allow: %s%s", r.text(), nl)
		} else {
			fmt.Fprintf(&b, "Disallow: %s%s", r.text(), nl)
		}
	}
	for _, r := range f.orphans {
		writeRule(r)
	}
	for _, g := range f.groups {
		b.WriteString(nl)
		for _, a := range g.agents {
			fmt.Fprintf(&b, "User-agent: %s%s", a, nl)
		}
		if g.crawlDelay > 0 {
			fmt.Fprintf(&b, "Crawl-delay: %s%s", strconv.FormatFloat(g.crawlDelay.Seconds(), 'f', -1, 64), nl)
		}
		for _, r := range g.rules {
			writeRule(r)
		}
	}
	if f.past != nil {
		const filler = "# a long file: these comments push what follows past the part crawlers must read"
		for b.Len() <= robotsParseLimit {
			b.WriteString(filler)
			b.WriteString(nl)
		}
		writeRule(*f.past)
	}
	if len(f.sitemaps) > 0 {
		b.WriteString(nl)
		for _, s := range f.sitemaps {
			fmt.Fprintf(&b, "Sitemap: %s%s", s, nl)
		}
	}
	return []byte(b.String())
}

// forAgent returns the rules and crawl delay that apply to token per
// RFC 9309 §2.2.1: every group naming the token (case-insensitively, whole
// token) is merged; only when none does, the "*" groups are.
func (f *robotsFile) forAgent(token string) ([]rule, time.Duration) {
	var rules []rule
	var delay time.Duration
	collect := func(want string) bool {
		found := false
		for _, g := range f.groups {
			for _, a := range g.agents {
				if strings.EqualFold(a, want) {
					rules = append(rules, g.rules...)
					delay = max(delay, g.crawlDelay)
					found = true
					break
				}
			}
		}
		return found
	}
	if !collect(token) {
		collect("*")
	}
	return rules, delay
}

// allowed applies RFC 9309 §2.2.2 to path (path plus query): the matching
// rule with the longest pattern wins, Allow wins a tie, no match allows.
func allowed(rules []rule, path string) bool {
	best, allow := -1, true
	for _, r := range rules {
		if !matchPattern(r.pattern, path) {
			continue
		}
		if n := len(r.pattern); n > best || (n == best && r.allow) {
			best, allow = n, r.allow
		}
	}
	return allow
}

// matchPattern reports whether a robots.txt path pattern matches the start
// of path; "*" matches any run of bytes and a final "$" anchors the end.
func matchPattern(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	// Greedy matching with backtracking to the last "*" is linear enough for
	// the handful of short patterns used here.
	p, s := 0, 0
	star, mark := -1, 0
	for {
		if p == len(pattern) {
			if !anchored || s == len(path) {
				return true
			}
		} else if pattern[p] == '*' {
			star, mark = p, s
			p++
			continue
		} else if s < len(path) && pattern[p] == path[s] {
			p++
			s++
			continue
		}
		if star < 0 || mark >= len(path) {
			return false
		}
		mark++
		p, s = star+1, mark
	}
}

// serveRobots answers the robots.txt URL and its redirect hops. It reports
// false when path is not one of them.
func (w *Web) serveRobots(rw *logWriter, r *http.Request, h *host, path string) bool {
	switch h.robots {
	case RobotsRedirect:
		switch path {
		case robotsPath:
			redirect(rw, robotsRedirectHop1, http.StatusMovedPermanently)
		case robotsRedirectHop1:
			redirect(rw, "http://"+h.authority+robotsRedirectFinal, http.StatusMovedPermanently)
		case robotsRedirectFinal:
			writeBody(rw, r, http.StatusOK, "text/plain; charset=utf-8", h.robotsTxt)
		default:
			return false
		}
		return true
	case RobotsRedirectLoop:
		if path == robotsPath {
			redirect(rw, robotsLoopPrefix+"1", http.StatusMovedPermanently)
			return true
		}
		n, ok := strings.CutPrefix(path, robotsLoopPrefix)
		if !ok {
			return false
		}
		i, err := strconv.Atoi(n)
		if err != nil || i < 1 || i > robotsLoopHops || n != strconv.Itoa(i) {
			return false
		}
		next := robotsLoopPrefix + strconv.Itoa(i+1)
		if i == robotsLoopHops {
			next = robotsPath
		}
		redirect(rw, next, http.StatusMovedPermanently)
		return true
	}
	if path != robotsPath {
		return false
	}
	switch h.robots {
	case RobotsNotFound:
		writeBody(rw, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundBody)
	case RobotsServerError:
		rw.Header().Set("Retry-After", "3600")
		writeBody(rw, r, http.StatusServiceUnavailable, "text/html; charset=utf-8", unavailableBody)
	case RobotsTimeout:
		w.hang(r.Context())
	default:
		writeBody(rw, r, http.StatusOK, "text/plain; charset=utf-8", h.robotsTxt)
	}
	return true
}
