// Package policy holds the operator's per-host overrides: a longer delay,
// extra disallowed paths, a lower URL cap, and boosts that steer which of
// a host's URLs are fetched first. An override only ever makes the
// crawler more polite: it is refused if it would ask a host more often than
// the crawl's own delay, more often than the host's robots.txt Crawl-delay,
// or for more URLs than the crawl's per-host cap, and it cannot allow what
// robots.txt disallows (it has no way to say so). A boost changes the
// order in which URLs are fetched, never how often a host is asked, nor
// what may be fetched: politeness decides when a host is asked, a boost
// only what it is asked for.
//
// A policy file is a JSON object from host to policy, the body that
// PUT /v1/policies/{host} takes:
//
//	{
//	  "example.com":      {"crawl_delay": "5s", "disallowed": ["/search", "/*?sort="]},
//	  "shop.example:8080": {"max_urls": 2000},
//	  "news.example":     {"boost": 4, "boosts": [{"pattern": "/live/*", "factor": 8}, {"pattern": "/archive/", "factor": 0.1}]}
//	}
//
// "delay" and "disallow", the names files used before the API's, are still
// read (deprecated): a policy may not name a field both ways.
//
// "boost" is a factor on the rank (package importance) every URL of the
// host is queued with, from MinBoost to MaxBoost: above 1 it is fetched
// sooner among the host's URLs, and a rank boosted to importance.HighRank
// goes to the high front queue; below 1, later. "boosts" are path patterns
// with a factor each: a URL takes the factor of the first pattern it
// matches, times the host's boost.
//
// "headers" are header fields sent with every request to the host alone
// (not its subdomains), such as a token the site gave: {"X-Token":
// "..."}. They are secrets: the API neither shows nor takes them, nor are
// they kept in the crawl's state or printed in a profile; they come from
// the policy file or the profile alone.
//
// A key without a port applies to every port of the host; one with a port to
// that port only, and wins over the key without. Disallow and boost
// patterns are robots.txt path patterns ('*' and a final '$'), matched as
// robots.txt rules are.
package policy

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/robots"
)

// Policy is one host's override. Its zero fields override nothing. It
// reads and writes itself as JSON in the one schema of the policy file and
// the API (see the package comment).
type Policy struct {
	// Delay is the least gap between two requests to the host.
	Delay Duration `json:"crawl_delay,omitzero"`
	// Disallow are robots.txt path patterns the crawler must not fetch,
	// beside those of the host's robots.txt.
	Disallow []string `json:"disallowed,omitempty"`
	// MaxURLs caps the URLs accepted for the host.
	MaxURLs int64 `json:"max_urls,omitzero"`
	// Render is "never", "auto" or "always": whether the host's HTML
	// pages are rendered in a browser, whatever --render says (rendering
	// must be on for "auto" or "always" to render); "" follows --render.
	Render string `json:"render,omitempty"`
	// Boost is a factor on the rank of every URL of the host, from
	// MinBoost to MaxBoost; zero leaves ranks as they are (as 1 does).
	Boost float64 `json:"boost,omitzero"`
	// Boosts are path patterns with a factor each, on the rank of the
	// URLs they match: the first that matches decides, times Boost.
	Boosts []PatternBoost `json:"boosts,omitempty"`
	// Headers are header fields sent with every request to the host, by
	// canonical name. Never written as JSON (the API's answers, the
	// crawl's state) nor by Fields: header values are secrets.
	Headers map[string]string `json:"-"`

	// delayName and disallowName are the fields' names as the JSON read
	// spelt them, "" for the current ones: errors name what the user wrote.
	delayName, disallowName string

	rules      *robots.Policy   // Disallow, compiled; nil if none
	boostRules []*robots.Policy // each of Boosts' patterns, compiled as a rule that disallows it
}

// PatternBoost is a factor on the rank of the URLs whose path matches
// Pattern, a robots.txt path pattern.
type PatternBoost struct {
	Pattern string  `json:"pattern"`
	Factor  float64 `json:"factor"`
}

// The bounds of a boost factor: a thousand times up or a hundred times
// down is past anything an estimate tells apart, and a factor of zero
// would say "never", which is "disallowed"'s to say.
const (
	MinBoost = 0.01
	MaxBoost = 1000
)

// The fields of a policy object, under their names and the deprecated
// ones.
const (
	fieldDelay    = "crawl_delay"
	fieldDisallow = "disallowed"
	fieldMaxURLs  = "max_urls"
	fieldRender   = "render"
	fieldBoost    = "boost"
	fieldBoosts   = "boosts"
	fieldHeaders  = "headers"
)

var fieldOf = map[string]string{
	fieldDelay: fieldDelay, "delay": fieldDelay,
	fieldDisallow: fieldDisallow, "disallow": fieldDisallow,
	fieldMaxURLs: fieldMaxURLs,
	fieldRender:  fieldRender,
	fieldBoost:   fieldBoost,
	fieldBoosts:  fieldBoosts,
	fieldHeaders: fieldHeaders,
}

// FieldError is a fault in one field of a policy: Field is the field's
// name as the input spelt it, Index its place among the fields given (-1
// when the fault is the policy's as a whole).
type FieldError struct {
	Field string
	Index int
	Msg   string
	at    int64 // offset of the field's name from the JSON object's start
}

func (e *FieldError) Error() string { return e.Msg }

// UnmarshalJSON reads a policy object. Field names are matched exactly
// (encoding/json would take "Crawl_Delay" too), so that an error can name a
// field as the input spells it.
func (p *Policy) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil {
		return err
	} else if d, ok := tok.(json.Delim); !ok || d != '{' {
		return &FieldError{Index: -1, Msg: fmt.Sprintf("a policy is a JSON object, not %s", clip(b))}
	}
	var names []string
	var values []any
	var offsets []int64
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		at := dec.InputOffset()
		at -= int64(len(strconv.Quote(name))) // near enough for a line number
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		vd := json.NewDecoder(bytes.NewReader(raw))
		vd.UseNumber()
		var v any
		if err := vd.Decode(&v); err != nil {
			return err
		}
		names, values, offsets = append(names, name), append(values, v), append(offsets, at)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return err
	}
	out, err := FromFields(names, values)
	if fe, ok := err.(*FieldError); ok && fe.Index >= 0 {
		fe.at = offsets[fe.Index]
	}
	if err != nil {
		return err
	}
	*p = out
	return nil
}

// FromFields makes a policy of its fields, given by name ("crawl_delay",
// "disallowed", "max_urls", "render", "boost", "boosts", "headers", or the
// deprecated "delay" and "disallow")
// with their values as encoding/json decodes them with UseNumber, or as a
// TOML decoder does: the one schema of the policy file, the API's body
// and a crawl profile's [policies."host"] tables. A fault is a
// *FieldError naming the field.
func FromFields(names []string, values []any) (Policy, error) {
	var out Policy
	named := map[string]string{} // field -> the name it was given
	for i, name := range names {
		field, ok := fieldOf[name]
		if !ok {
			return Policy{}, &FieldError{Field: name, Index: i, Msg: fmt.Sprintf(`unknown field %q (a policy has "crawl_delay", "disallowed", "max_urls", "render", "boost", "boosts" and "headers"; it cannot allow what robots.txt disallows)`, name)}
		}
		if first, dup := named[field]; dup {
			if first == name {
				return Policy{}, &FieldError{Field: name, Index: i, Msg: fmt.Sprintf("%s: given twice", name)}
			}
			return Policy{}, &FieldError{Field: name, Index: i, Msg: fmt.Sprintf("%s and %s are one field (%q is the deprecated name of %q): give it once", first, name, other(first, name), field)}
		}
		named[field] = name
		if err := out.set(field, name, values[i]); err != nil {
			return Policy{}, &FieldError{Field: name, Index: i, Msg: err.Error()}
		}
	}
	return out, nil
}

// Fields calls fn with each field the policy sets, in the schema's order,
// under its current name, its value as a profile writes it: a duration as
// a string ("5s"), patterns as a []string, a count as an int64, a factor
// as a float64, pattern boosts as a []PatternBoost. Headers are left
// out: their values are secrets.
func (p Policy) Fields(fn func(name string, v any)) {
	if p.Delay != 0 {
		fn(fieldDelay, time.Duration(p.Delay).String())
	}
	if len(p.Disallow) > 0 {
		fn(fieldDisallow, slices.Clone(p.Disallow))
	}
	if p.MaxURLs != 0 {
		fn(fieldMaxURLs, p.MaxURLs)
	}
	if p.Render != "" {
		fn(fieldRender, p.Render)
	}
	if p.Boost != 0 {
		fn(fieldBoost, p.Boost)
	}
	if len(p.Boosts) > 0 {
		fn(fieldBoosts, slices.Clone(p.Boosts))
	}
}

// other is, of two names of one field, the deprecated one.
func other(a, b string) string {
	if fieldOf[a] == a {
		return b
	}
	return a
}

// set reads field's value, given under name.
func (p *Policy) set(field, name string, v any) error {
	switch field {
	case fieldDelay:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s %s: a duration is a string such as \"5s\"", name, show(v))
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%s %q: a duration is a string such as \"5s\" or \"1m30s\"", name, s)
		}
		p.Delay, p.delayName = Duration(d), name
	case fieldDisallow:
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s %s: want a list of path patterns such as [\"/private/\"]", name, show(v))
		}
		p.Disallow = make([]string, len(list))
		for i, e := range list {
			if p.Disallow[i], ok = e.(string); !ok {
				return fmt.Errorf("%s %s: want a list of path patterns such as [\"/private/\"]", name, show(v))
			}
		}
		p.disallowName = name
	case fieldMaxURLs:
		var err error
		switch n := v.(type) {
		case json.Number:
			p.MaxURLs, err = n.Int64()
		case int64:
			p.MaxURLs = n
		default:
			err = errors.New("not a number")
		}
		if err != nil {
			return fmt.Errorf("%s %s: want a whole number of URLs", name, show(v))
		}
	case fieldRender:
		s, ok := v.(string)
		if !ok || (s != "never" && s != "auto" && s != "always") {
			return fmt.Errorf("%s %s: want \"never\", \"auto\" or \"always\"", name, show(v))
		}
		p.Render = s
	case fieldBoost:
		f, ok := number(v)
		if !ok {
			return fmt.Errorf("%s %s: want a factor such as 4 or 0.5", name, show(v))
		}
		if err := checkFactor(name, f); err != nil {
			return err
		}
		p.Boost = f
	case fieldBoosts:
		return p.setBoosts(name, v)
	case fieldHeaders:
		return p.setHeaders(name, v)
	}
	return nil
}

// setHeaders reads an object of header fields, {"X-Token": "..."}. Its
// errors name the field, never its value.
func (p *Policy) setHeaders(name string, v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf(`%s: want an object of header fields such as {"X-Token": "..."}`, name)
	}
	p.Headers = make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		val, ok := m[k].(string)
		if !ok {
			return fmt.Errorf("%s: header %q: want its value as a string", name, k)
		}
		if err := fetch.CheckHeader(k, val); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		ck := http.CanonicalHeaderKey(k)
		if _, dup := p.Headers[ck]; dup {
			return fmt.Errorf("%s: header %q given twice", name, ck)
		}
		p.Headers[ck] = val
	}
	return nil
}

// setBoosts reads a list of pattern boosts, [{"pattern": "/news/*",
// "factor": 8}], each object's fields named exactly.
func (p *Policy) setBoosts(name string, v any) error {
	const want = `want a list such as [{"pattern": "/news/*", "factor": 8}]`
	var list []any
	switch v := v.(type) {
	case []any:
		list = v
	case []map[string]any: // a TOML array of tables
		for _, m := range v {
			list = append(list, m)
		}
	default:
		return fmt.Errorf("%s %s: %s", name, show(v), want)
	}
	p.Boosts = make([]PatternBoost, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return fmt.Errorf("%s[%d] %s: %s", name, i, show(e), want)
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if k != "pattern" && k != "factor" {
				return fmt.Errorf("%s[%d]: unknown field %q (a pattern boost has \"pattern\" and \"factor\")", name, i, k)
			}
		}
		pat, ok := m["pattern"].(string)
		if !ok {
			return fmt.Errorf("%s[%d].pattern %s: want a path pattern such as \"/news/*\"", name, i, show(m["pattern"]))
		}
		f, ok := number(m["factor"])
		if !ok {
			return fmt.Errorf("%s[%d].factor %s: want a factor such as 4 or 0.5", name, i, show(m["factor"]))
		}
		if err := checkFactor(fmt.Sprintf("%s[%d].factor", name, i), f); err != nil {
			return err
		}
		p.Boosts[i] = PatternBoost{Pattern: pat, Factor: f}
	}
	return nil
}

// number is a decoded JSON or TOML number as a float64.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// checkFactor refuses a boost factor out of bounds; name is how the input
// named it.
func checkFactor(name string, f float64) error {
	if !(f >= MinBoost && f <= MaxBoost) { // NaN too
		return fmt.Errorf("%s %s: want a factor from %g to %g (1 leaves a rank as it is; a factor of 0 is \"disallowed\"'s to say)",
			name, strconv.FormatFloat(f, 'g', -1, 64), float64(MinBoost), float64(MaxBoost))
	}
	return nil
}

// show is a decoded value as the input would have written it, short
// enough to repeat in an error.
func show(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(v)
	case json.Number:
		return v.String()
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	b, _ := json.Marshal(v)
	return clip(b)
}

// clip is a JSON value short enough to repeat in an error.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// Allowed reports whether the policy lets the crawler fetch pathQuery (path
// and query, as robots.Policy.Allowed takes it).
func (p *Policy) Allowed(pathQuery string) bool {
	return p == nil || p.rules == nil || p.rules.Allowed(pathQuery)
}

// BoostOf is the factor on the rank of the URL with pathQuery (path and
// query): the host's Boost times the factor of the first of Boosts whose
// pattern matches; 1 for a nil policy, or one without boosts.
func (p *Policy) BoostOf(pathQuery string) float64 {
	if p == nil {
		return 1
	}
	f := cmp.Or(p.Boost, 1)
	for i, r := range p.boostRules {
		if !r.Allowed(pathQuery) { // the one rule disallows what the pattern matches
			return f * p.Boosts[i].Factor
		}
	}
	return f
}

// Duration is a time.Duration written as Go writes one ("1.5s", "2m").
type Duration time.Duration

// MarshalJSON writes d as a string such as "1.5s".
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a string such as "1.5s" or "2m".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil || len(b) == 0 || b[0] != '"' {
		return fmt.Errorf("policy: duration %s: a duration is a string such as \"5s\"", clip(b))
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("policy: duration %q: a duration is a string such as \"5s\" or \"1m30s\"", s)
	}
	*d = Duration(v)
	return nil
}

// Limits are the crawl's own settings a policy may only tighten.
type Limits struct {
	Delay   time.Duration // the crawl's delay: a policy's must not be shorter
	MaxURLs int64         // the crawl's per-host cap (0: none): a policy's must not be larger
}

// check validates p for host and compiles its rules.
func (p *Policy) check(host string, lim Limits) error {
	delay, disallow := cmp.Or(p.delayName, fieldDelay), cmp.Or(p.disallowName, fieldDisallow)
	fault := func(field, format string, args ...any) error {
		return &FieldError{Field: field, Index: -1, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case p.Delay < 0:
		return fault(delay, "%s: %s %v is negative", host, delay, time.Duration(p.Delay))
	case p.Delay > 0 && time.Duration(p.Delay) < lim.Delay:
		return fault(delay, "%s: %s %v is shorter than the crawl's delay %v; a policy can only make weft slower",
			host, delay, time.Duration(p.Delay), lim.Delay)
	case p.MaxURLs < 0:
		return fault(fieldMaxURLs, "%s: max_urls %d is negative", host, p.MaxURLs)
	case p.MaxURLs > 0 && lim.MaxURLs > 0 && p.MaxURLs > lim.MaxURLs:
		return fault(fieldMaxURLs, "%s: max_urls %d is above the crawl's cap of %d URLs per host; a policy can only lower it",
			host, p.MaxURLs, lim.MaxURLs)
	}
	for k, v := range p.Headers {
		if err := fetch.CheckHeader(k, v); err != nil {
			return fault(fieldHeaders, "%s: %s: %v", host, fieldHeaders, err)
		}
	}
	if p.Boost != 0 {
		if err := checkFactor(fieldBoost, p.Boost); err != nil {
			return fault(fieldBoost, "%s: %v", host, err)
		}
	}
	p.boostRules = make([]*robots.Policy, len(p.Boosts))
	for i, b := range p.Boosts {
		if err := checkFactor(fmt.Sprintf("%s[%d].factor", fieldBoosts, i), b.Factor); err != nil {
			return fault(fieldBoosts, "%s: %v", host, err)
		}
		if !isPattern(b.Pattern) {
			return fault(fieldBoosts, "%s: %s[%d].pattern %q: want a path pattern starting with / or *, on one line, without #", host, fieldBoosts, i, b.Pattern)
		}
		p.boostRules[i] = compile([]string{b.Pattern})
	}
	if len(p.Disallow) == 0 {
		p.rules = nil
		return nil
	}
	for i, d := range p.Disallow {
		if !isPattern(d) {
			return fault(disallow, "%s: %s[%d] %q: want a path pattern starting with / or *, on one line, without #", host, disallow, i, d)
		}
	}
	p.rules = compile(p.Disallow)
	return nil
}

// isPattern reports whether d can be a robots.txt rule's path pattern.
func isPattern(d string) bool {
	return d != "" && (d[0] == '/' || d[0] == '*') && !strings.ContainsAny(d, "\r\n#")
}

// compile makes robots.txt rules that disallow patterns (isPattern).
func compile(patterns []string) *robots.Policy {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for _, d := range patterns {
		b.WriteString("Disallow: " + d + "\n")
	}
	return robots.Parse([]byte(b.String()), "weft", 200, time.Time{})
}

var keyCanon = canon.New(canon.Config{})

// normalHost turns a key into the authority the crawler's canonical URLs
// have: the host in lower case and punycode (IPv6 in brackets), a port only
// when it is not 80. A key that no URL could ever match is refused.
// NormalHost returns the authority a host key stands for, as URLs are
// queued under it (lowercase, punycode, no default port, no trailing dot),
// or why it is not one.
func NormalHost(key string) (string, error) { return normalHost(key) }

func normalHost(key string) (string, error) {
	k := strings.TrimSpace(key)
	if k == "" || strings.ContainsAny(k, "/?#@ \t*") {
		return "", fmt.Errorf("%q is not a host name (with an optional :port)", key)
	}
	u, err := keyCanon.Parse("http://" + k + "/")
	if err != nil || u.Path != "/" || u.Query != "" {
		if strings.Count(k, ":") > 1 && !strings.HasPrefix(k, "[") {
			return "", fmt.Errorf("%q is not a host name: write an IPv6 address in brackets, [::1]", key)
		}
		return "", fmt.Errorf("%q is not a host name (with an optional :port)", key)
	}
	if u.Port == "443" {
		return "", fmt.Errorf("%q: 443 is https's default port, which URLs leave out: write %q alone", key, u.Host)
	}
	return strings.TrimSuffix(u.Authority, "."), nil
}

// hostPart is the host of a normal authority, without its port.
func hostPart(authority string) string {
	if strings.HasSuffix(authority, "]") {
		return authority
	}
	if i := strings.LastIndexByte(authority, ':'); i >= 0 {
		return authority[:i]
	}
	return authority
}

// merge is what a port's policy and its host's make together: the longer
// delay, both sets of disallowed paths, the lower cap, the port's render
// mode and boost if it has them, both lists of pattern boosts, the
// port's tried first, and both sets of headers, the port's winning.
func merge(port, host *Policy, lim Limits) *Policy {
	m := Policy{
		Delay:    max(port.Delay, host.Delay),
		Disallow: append(slices.Clone(port.Disallow), host.Disallow...),
		MaxURLs:  port.MaxURLs,
		Render:   cmp.Or(port.Render, host.Render),
		Boost:    cmp.Or(port.Boost, host.Boost),
		Boosts:   append(slices.Clone(port.Boosts), host.Boosts...),
	}
	if len(port.Headers)+len(host.Headers) > 0 {
		m.Headers = maps.Clone(host.Headers)
		if m.Headers == nil {
			m.Headers = map[string]string{}
		}
		maps.Copy(m.Headers, port.Headers)
	}
	if m.MaxURLs == 0 || (host.MaxURLs > 0 && host.MaxURLs < m.MaxURLs) {
		m.MaxURLs = host.MaxURLs
	}
	m.check("", lim) // both passed it: only compiles the rules
	return &m
}

// Set is the policies in force, safe for concurrent use: the crawl reads
// them on every URL while an operator may change them.
type Set struct {
	lim Limits
	mu  sync.RWMutex
	by  map[string]*Policy // normal authority (host, or host:port)
	// merged holds, for each key with a port whose host also has a
	// policy, the two merged: a port's policy adds to its host's, never
	// replaces it.
	merged map[string]*Policy
}

// NewSet returns an empty set that accepts policies within lim.
func NewSet(lim Limits) *Set {
	return &Set{lim: lim, by: map[string]*Policy{}, merged: map[string]*Policy{}}
}

// Put sets host's policy, replacing any it had; an error says why it is
// refused, and leaves the set as it was.
func (s *Set) Put(host string, p Policy) error {
	h, err := normalHost(host)
	if err != nil {
		return err
	}
	p.Disallow, p.Boosts, p.Headers = slices.Clone(p.Disallow), slices.Clone(p.Boosts), maps.Clone(p.Headers)
	if err := p.check(h, s.lim); err != nil {
		return err
	}
	s.mu.Lock()
	s.by[h] = &p
	s.remerge()
	s.mu.Unlock()
	return nil
}

// Delete removes host's policy, and reports whether it had one.
func (s *Set) Delete(host string) bool {
	h, err := normalHost(host)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.by[h]
	delete(s.by, h)
	s.remerge()
	return ok
}

// remerge rebuilds merged; s.mu is held for writing.
func (s *Set) remerge() {
	clear(s.merged)
	for k, p := range s.by {
		if h := hostPart(k); h != k {
			if hp, ok := s.by[h]; ok {
				s.merged[k] = merge(p, hp, s.lim)
			}
		}
	}
}

// Render returns the render mode the policy of a URL's host sets (For),
// or "" when none does: the crawl's mode then decides.
func (s *Set) Render(authority, host string) string {
	if p := s.For(authority, host); p != nil {
		return p.Render
	}
	return ""
}

// For returns the policy of a URL's host: that of its authority
// (host:port, or host when the port is the scheme's default) merged with
// that of its host name, whichever exist; nil if neither does. The
// returned policy must not be modified.
func (s *Set) For(authority, host string) *Policy {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.by) == 0 {
		return nil
	}
	if m, ok := s.merged[authority]; ok {
		return m
	}
	if p, ok := s.by[authority]; ok {
		return p
	}
	return s.by[host]
}

// ForAuthority is For with the host name taken from the authority.
func (s *Set) ForAuthority(authority string) *Policy {
	return s.For(authority, hostPart(authority))
}

// BoostURL is the boost in force for a canonical URL of authority
// (Policy.BoostOf of its path and query): 1 when its host has no policy
// or no boost. It reads the policies at the call: one changed while the
// crawl runs applies to the URLs queued from then on.
func (s *Set) BoostURL(authority, url string) float64 {
	p := s.ForAuthority(authority)
	if p == nil || (p.Boost == 0 && len(p.boostRules) == 0) {
		return 1
	}
	return p.BoostOf(pathQuery(url))
}

// pathQuery is the path and query of an absolute URL (what follows its
// authority), "/" when it has none.
func pathQuery(url string) string {
	rest := url
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		return rest[i:]
	}
	return "/"
}

// All returns a copy of the policies by host; nil for a nil Set.
func (s *Set) All() map[string]Policy {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]Policy, len(s.by))
	for h, p := range s.by {
		out[h] = *p
	}
	return out
}

// Len returns the number of hosts with a policy; 0 for a nil Set.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.by)
}

// Load reads a policy file into a new Set; errors name the file and, for
// the file's syntax, the line.
func Load(path string, lim Limits) (*Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("policy file: %w", err)
	}
	s, err := Parse(data, lim)
	if err != nil {
		return nil, fmt.Errorf("policy file %s: %w", path, err)
	}
	return s, nil
}

// Parse reads a policy file's content (see the package comment). Errors
// name the line and the host.
func Parse(data []byte, lim Limits) (*Set, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("empty: want a JSON object from host to policy")
	}
	if err != nil {
		return nil, atLine(data, dec, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("line %d: want a JSON object from host to policy, not %v", lineOf(data, dec.InputOffset()), tok)
	}
	s := NewSet(lim)
	lines := map[string]int{} // normal host -> line of its policy
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, atLine(data, dec, err)
		}
		key, _ := tok.(string)
		line := lineOf(data, dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			n, msg := lineMsg(data, dec, err)
			return nil, fmt.Errorf("line %d: %s: %s", n, key, msg)
		}
		var p Policy
		if err := p.UnmarshalJSON(raw); err != nil {
			at := dec.InputOffset() - int64(len(raw))
			var fe *FieldError
			if errors.As(err, &fe) {
				at += fe.at
			}
			return nil, fmt.Errorf("line %d: %s: %w", lineOf(data, at), key, err)
		}
		h, err := normalHost(key)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if first, dup := lines[h]; dup {
			return nil, fmt.Errorf("line %d: %s: a second policy for the host (the first is on line %d)", line, h, first)
		}
		lines[h] = line
		if err := s.Put(h, p); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, atLine(data, dec, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("line %d: text after the policy object", lineOf(data, dec.InputOffset()))
	}
	return s, nil
}

// atLine gives a JSON error the line it is on.
func atLine(data []byte, dec *json.Decoder, err error) error {
	n, msg := lineMsg(data, dec, err)
	return fmt.Errorf("line %d: %s", n, msg)
}

// lineMsg finds the line of a JSON error and words it.
func lineMsg(data []byte, dec *json.Decoder, err error) (int, string) {
	off := dec.InputOffset()
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	case errors.Is(err, io.ErrUnexpectedEOF):
		return lineOf(data, int64(len(data))), "the file ends inside the policy object"
	}
	return lineOf(data, off), strings.TrimPrefix(err.Error(), "json: ")
}

func lineOf(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}
