package robots

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/jimsmart/grobotstxt"

	"github.com/weft-crawler/weft/internal/pct"
)

// Parse builds a Rules policy from a 2xx robots.txt body, for the product
// token (as returned by ProductToken; compared case-insensitively with each
// user-agent line's token). status and fetchedAt are recorded as given.
//
// Only the first MaxBytes are parsed, and of those only whole lines: a line
// cut at the limit is dropped rather than parsed short, since a cut
// "Allow: /a/b/c" would read as "Allow: /a" and allow far more than the site
// wrote. Lines are split, classified (with Google's accepted typos, such as
// "disalow" and a missing colon) and their rule values %-encoded by
// grobotstxt's parser; this package only collects what it reports, once.
func Parse(body []byte, productToken string, status int, fetchedAt time.Time) *Policy {
	p := &Policy{Outcome: Rules, Status: status, FetchedAt: fetchedAt}
	if len(body) > MaxBytes {
		p.Truncated = true
		body = body[:MaxBytes]
		body = body[:bytes.LastIndexAny(body, "\r\n")+1]
	}
	c := collector{token: productToken}
	grobotstxt.Parse(string(body), &c)
	if c.everSpecific {
		p.ruleSet = compile(c.specificRules)
		p.CrawlDelay = c.specificDelay
	} else {
		p.ruleSet = compile(c.globalRules)
		p.CrawlDelay = c.globalDelay
	}
	if len(p.rules) >= indexMin {
		p.index = newPrefixIndex(&p.ruleSet)
	}
	p.Sitemaps = c.sitemaps
	return p
}

// rawRule is an Allow or Disallow value as grobotstxt reports it: comment
// and blanks removed, non-ASCII octets %-encoded, %-escapes in upper case.
type rawRule struct {
	allow   bool
	pattern string
}

// collector is the grobotstxt.ParseHandler that records the rules of the
// groups that apply to one product token.
//
// It tracks groups for rules exactly as grobotstxt's RobotsMatcher does, so
// the two agree on which rules apply: consecutive user-agent lines form one
// group and only an Allow or Disallow line ends the list (a Sitemap,
// Crawl-delay or unknown line between user-agent lines does not); rules go
// to our specific group if the group names our token, else to the global
// group if it names "*", else nowhere. Rules before any user-agent line are
// ignored.
//
// Crawl-delay, which RFC 9309 does not define, is read the way sites write
// it: as a member line of the group whose user-agent lines precede it, so a
// user-agent line after it starts a new group. Under the rules' reading,
// "User-agent: *, Crawl-delay: 9, User-agent: weft, Crawl-delay: 4" would be
// one group, and we would wait 9 s where the site asked weft for 4.
type collector struct {
	token string

	// The group being read, for rules.
	global, specific bool // it names "*" / our token
	sawRule          bool // an Allow or Disallow has ended its user-agent list

	// The group being read, for Crawl-delay.
	delayGlobal, delaySpecific, sawMember bool

	everSpecific               bool // some group named our token
	specificRules, globalRules []rawRule
	specificDelay, globalDelay time.Duration

	sitemaps    []string
	sitemapSeen map[string]bool
}

var _ grobotstxt.ParseHandler = (*collector)(nil)

func (c *collector) HandleRobotsStart() {}

func (c *collector) HandleRobotsEnd() {}

func (c *collector) HandleUserAgent(_ int, value string) {
	if c.sawRule {
		c.global, c.specific, c.sawRule = false, false, false
	}
	if c.sawMember {
		c.delayGlobal, c.delaySpecific, c.sawMember = false, false, false
	}
	// Google: "*" followed by a blank and anything is still the global agent.
	if value != "" && value[0] == '*' && (len(value) == 1 || isSpace(value[1])) {
		c.global, c.delayGlobal = true, true
		return
	}
	if c.token != "" && strings.EqualFold(extractUserAgent(value), c.token) {
		c.specific, c.delaySpecific, c.everSpecific = true, true, true
	}
}

func (c *collector) HandleAllow(_ int, value string) {
	value = repairEscapes(value)
	if !c.addRule(true, value) {
		return
	}
	// Google: "Allow: /d/index.htm[l]" also allows the directory "/d/".
	// grobotstxt adds the derived "/d/$" only when the original does not
	// match; adding it always is equivalent, because it is shorter than the
	// original and so never outranks it.
	if i := strings.LastIndexByte(value, '/'); i >= 0 && strings.HasPrefix(value[i:], "/index.htm") {
		c.addRule(true, value[:i+1]+"$")
	}
}

func (c *collector) HandleDisallow(_ int, value string) { c.addRule(false, repairEscapes(value)) }

// repairEscapes undoes a grobotstxt v1.0.3 bug. When a rule has any
// %-escape with a lower-case hex digit, its escapePattern upper-cases the
// two octets after every '%' with c&^0x20, which also turns the digits
// '0'-'9' (0x30-0x39) into the control octets 0x10-0x19: "/%e3%83" reaches
// the handler as "/%E\x13%\x18\x13". (Its own AgentAllowed therefore never
// matches such a rule.) An octet in 0x10-0x19 right after '%' comes from
// this bug unless the file itself had a raw control octet there, which no
// site writes on purpose; setting the bit back restores the escape.
func repairEscapes(v string) string {
	isCorrupt := func(c byte) bool { return 0x10 <= c && c <= 0x19 }
	isEscOctet := func(c byte) bool { return isCorrupt(c) || pct.IsHex(c) }
	var b []byte
	for i := strings.IndexByte(v, '%'); i >= 0 && i+2 < len(v); {
		c1, c2 := v[i+1], v[i+2]
		if isEscOctet(c1) && isEscOctet(c2) && (isCorrupt(c1) || isCorrupt(c2)) {
			if b == nil {
				b = []byte(v)
			}
			if isCorrupt(c1) {
				b[i+1] |= 0x20
			}
			if isCorrupt(c2) {
				b[i+2] |= 0x20
			}
		}
		j := strings.IndexByte(v[i+1:], '%')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	if b == nil {
		return v
	}
	return string(b)
}

// addRule files a rule under the current group and reports whether the
// group applies to anyone we track.
func (c *collector) addRule(allow bool, value string) bool {
	c.sawMember = true
	if !c.global && !c.specific {
		return false
	}
	c.sawRule = true
	r := rawRule{allow: allow, pattern: value}
	if c.specific {
		c.specificRules = append(c.specificRules, r)
	} else {
		c.globalRules = append(c.globalRules, r)
	}
	return true
}

func (c *collector) HandleSitemap(_ int, value string) {
	if value == "" || len(c.sitemaps) >= maxSitemaps || c.sitemapSeen[value] {
		return
	}
	if c.sitemapSeen == nil {
		c.sitemapSeen = map[string]bool{}
	}
	c.sitemapSeen[value] = true
	c.sitemaps = append(c.sitemaps, strings.Clone(value))
}

func (c *collector) HandleUnknownAction(_ int, action, value string) {
	if !strings.EqualFold(action, "crawl-delay") {
		return
	}
	c.sawMember = true
	d, ok := parseCrawlDelay(value)
	switch {
	case !ok:
	case c.delaySpecific:
		c.specificDelay = max(c.specificDelay, d)
	case c.delayGlobal:
		c.globalDelay = max(c.globalDelay, d)
	}
}

// parseCrawlDelay accepts a non-negative decimal number of seconds ("10",
// "0.5", ".5", "2."), clamped to MaxCrawlDelay. Signs, exponents, units and
// anything else are rejected, so "1e9", "-1", "NaN" and "10s" are ignored
// rather than guessed at.
func parseCrawlDelay(v string) (time.Duration, bool) {
	digits, dots := 0, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case '0' <= c && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return 0, false
		}
	}
	if digits == 0 || dots > 1 {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil && !math.IsInf(f, 1) { // +Inf: too many digits, clamped below
		return 0, false
	}
	if f >= MaxCrawlDelay.Seconds() {
		return MaxCrawlDelay, true
	}
	return time.Duration(f * float64(time.Second)), true
}

// extractUserAgent returns the leading token of a user-agent line's value,
// with grobotstxt's notion of a token character, so that "FooBot/1.2" and
// "FooBot extra" name FooBot but "FooBotBar" does not.
func extractUserAgent(v string) string {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("~#$%'*+-.^_`|", c) >= 0) {
			return v[:i]
		}
	}
	return v
}

// isSpace is grobotstxt's test after a leading '*': unicode.IsSpace on a
// single byte, which includes 0x85 and 0xA0.
func isSpace(c byte) bool { return unicode.IsSpace(rune(c)) }

// compile turns a group's rules into match order: the longest pattern first
// and, at equal length, Allow before Disallow, so the first rule that matches
// is the one RFC 9309's "most specific match wins, Allow wins a tie" picks.
// Patterns are stored in comparison form (see appendCanon) and split at '*'
// into literal segments, all in one arena, each named by two offsets, so a
// Policy costs a few allocations however many rules it has, keeps no
// reference to the body, and takes about 16 bytes a rule and 8 a literal
// beside the literals' own bytes: a crawl keeps tens of thousands of them.
func compile(raw []rawRule) ruleSet {
	if len(raw) == 0 {
		return ruleSet{}
	}
	type prepared struct {
		allow   bool
		pattern string
	}
	seen := make(map[prepared]bool, len(raw))
	list := make([]prepared, 0, len(raw))
	size, nsegs := 0, 0
	for _, r := range raw {
		pat := string(appendCanon(nil, r.pattern))
		// An empty pattern matches everything with priority zero, which
		// never decides anything: "Disallow:" allows all.
		k := prepared{r.allow, pat}
		if pat == "" || seen[k] {
			continue
		}
		seen[k] = true
		list = append(list, k)
		size += len(pat)
		nsegs += strings.Count(pat, "*") + 1
	}
	slices.SortStableFunc(list, func(a, b prepared) int {
		if c := cmp.Compare(len(b.pattern), len(a.pattern)); c != 0 {
			return c
		}
		switch {
		case a.allow == b.allow:
			return 0
		case a.allow:
			return -1
		}
		return 1
	})

	rs := ruleSet{arena: make([]byte, 0, size), lits: make([]lit, 0, nsegs), rules: make([]rule, 0, len(list))}
	for _, pr := range list {
		r := rule{prio: int32(len(pr.pattern)), allow: pr.allow, first: uint32(len(rs.lits))}
		pat := pr.pattern
		// '$' anchors only as the last octet, as in grobotstxt; elsewhere it
		// is literal.
		if strings.HasSuffix(pat, "$") {
			r.anchored = true
			pat = pat[:len(pat)-1]
		}
		parts := strings.Split(pat, "*")
		for i, s := range parts {
			// Empty inner segments ("**") match trivially; the first and
			// last are kept because their position matters.
			if s == "" && i != 0 && i != len(parts)-1 {
				continue
			}
			start := len(rs.arena)
			rs.arena = append(rs.arena, s...)
			rs.lits = append(rs.lits, lit{off: uint32(start), end: uint32(len(rs.arena))})
			r.minLen += int32(len(s))
			r.n++
		}
		rs.rules = append(rs.rules, r)
	}
	return rs
}
