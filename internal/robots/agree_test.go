package robots

import (
	"strings"
	"testing"
	"time"

	"github.com/jimsmart/grobotstxt"
)

// agreeCase is one (robots.txt, agent, URL) question. want is this package's
// answer; grobotstxt.AgentAllowed gives the same answer unless differs says
// why it does not (then it gives !want).
type agreeCase struct {
	name    string
	robots  string
	agent   string
	path    string // path and query; the URL is "http://foo.bar" + path
	want    bool
	differs string
}

// grobotstxtCaseBug explains the disagreements that repairEscapes causes.
const grobotstxtCaseBug = "grobotstxt v1.0.3 bug: a lower-case %-escape in a rule makes escapePattern " +
	"turn the digits of every escape in it into control octets, so the rule never matches"

// Most cases are from Google's robots_test.cc (github.com/google/robotstxt),
// named after its test IDs.
func agreeCases() []agreeCase {
	const (
		groups = "allow: /foo/bar/\n\nuser-agent: FooBot\ndisallow: /\nallow: /x/\nuser-agent: BarBot\n" +
			"disallow: /\nallow: /y/\n\n\nallow: /w/\nuser-agent: BazBot\n\nuser-agent: FooBot\nallow: /z/\ndisallow: /\n"
		global       = "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n"
		onlySpecific = "user-agent: FooBot\nallow: /\nuser-agent: BarBot\ndisallow: /\nuser-agent: BazBot\ndisallow: /\n"
		fish         = "user-agent: FooBot\ndisallow: /\nallow: /fish\n"
		fishStar     = "user-agent: FooBot\ndisallow: /\nallow: /fish*\n"
		fishSlash    = "user-agent: FooBot\ndisallow: /\nallow: /fish/\n"
		php          = "user-agent: FooBot\ndisallow: /\nallow: /*.php\n"
		phpEnd       = "user-agent: FooBot\ndisallow: /\nallow: /*.php$\n"
		fishPhp      = "user-agent: FooBot\ndisallow: /\nallow: /fish*.php\n"
		lineEnds     = "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /\n"
		indexHTML    = "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n"
		special1     = "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n"
		special2     = "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n"
		special3     = "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n"
		typical      = "# typical\nUser-agent: *\nDisallow: /cgi-bin/\nDisallow: /tmp/\nDisallow: /*?sessionid=\n" +
			"Allow: /tmp/public/\n\nUser-agent: weft\nDisallow: /private\nAllow: /private/ok\nCrawl-delay: 2\n"
	)
	longA, longB := "/x/", "/x/"
	for len(longA) < 2083*8-len("allow: ")+1 {
		longA += "a"
		longB += "b"
	}
	longRobots := "user-agent: FooBot\ndisallow: /\nallow: " + longA + "/qux\nallow: " + longB + "/qux\n"
	longD := "/x/"
	for len(longD) < 2083*8-len("/x/")-len("disallow: ")+1 {
		longD += "a"
	}
	longDRobots := "user-agent: FooBot\ndisallow: " + longD + "/qux\n"

	return []agreeCase{
		// ID_SystemTest
		{"empty robots.txt", "", "FooBot", "/", true, ""},
		{"empty agent", "user-agent: FooBot\ndisallow: /\n", "", "/", true, ""},
		{"empty path", "user-agent: FooBot\ndisallow: /\n", "FooBot", "", false, ""},

		// ID_LineSyntax_Line
		{"line correct", "user-agent: FooBot\ndisallow: /\n", "FooBot", "/x/y", false, ""},
		{"line incorrect keys", "foo: FooBot\nbar: /\n", "FooBot", "/x/y", true, ""},
		{"line missing colon accepted", "user-agent FooBot\ndisallow /\n", "FooBot", "/x/y", false, ""},
		{"line missing colon, three words", "user-agent FooBot\ndisallow / x\n", "FooBot", "/x/y", true, ""},

		// ID_LineSyntax_Groups
		{"groups FooBot x", groups, "FooBot", "/x/b", true, ""},
		{"groups FooBot z (merged group)", groups, "FooBot", "/z/d", true, ""},
		{"groups FooBot y", groups, "FooBot", "/y/c", false, ""},
		{"groups BarBot y", groups, "BarBot", "/y/c", true, ""},
		{"groups BarBot w (blank lines do not end a group)", groups, "BarBot", "/w/a", true, ""},
		{"groups BarBot z", groups, "BarBot", "/z/d", false, ""},
		{"groups BazBot z (shares FooBot's group)", groups, "BazBot", "/z/d", true, ""},
		{"groups rule before user-agent ignored FooBot", groups, "FooBot", "/foo/bar/", false, ""},
		{"groups rule before user-agent ignored BarBot", groups, "BarBot", "/foo/bar/", false, ""},
		{"groups rule before user-agent ignored BazBot", groups, "BazBot", "/foo/bar/", false, ""},

		// ID_LineSyntax_Groups_OtherRules
		{"sitemap inside user-agent list FooBot", "User-agent: BarBot\nSitemap: https://foo.bar/sitemap\nUser-agent: *\nDisallow: /\n", "FooBot", "/", false, ""},
		{"sitemap inside user-agent list BarBot", "User-agent: BarBot\nSitemap: https://foo.bar/sitemap\nUser-agent: *\nDisallow: /\n", "BarBot", "/", false, ""},
		{"unknown inside user-agent list FooBot", "User-agent: FooBot\nInvalid-Unknown-Line: unknown\nUser-agent: *\nDisallow: /\n", "FooBot", "/", false, ""},
		{"unknown inside user-agent list BarBot", "User-agent: FooBot\nInvalid-Unknown-Line: unknown\nUser-agent: *\nDisallow: /\n", "BarBot", "/", false, ""},
		{"crawl-delay inside user-agent list", "User-agent: FooBot\nCrawl-delay: 3\nUser-agent: BarBot\nDisallow: /\n", "FooBot", "/", false, ""},

		// ID_REPLineNamesCaseInsensitive
		{"upper keys allow", "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n", "FooBot", "/x/y", true, ""},
		{"upper keys disallow", "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n", "FooBot", "/a/b", false, ""},
		{"lower keys disallow", "user-agent: FooBot\nallow: /x/\ndisallow: /\n", "FooBot", "/a/b", false, ""},
		{"camel keys allow", "uSeR-aGeNt: FooBot\nAlLoW: /x/\ndIsAlLoW: /\n", "FooBot", "/x/y", true, ""},
		{"camel keys disallow", "uSeR-aGeNt: FooBot\nAlLoW: /x/\ndIsAlLoW: /\n", "FooBot", "/a/b", false, ""},

		// ID_UserAgentValueCaseInsensitive and ID_GoogleOnly_AcceptUserAgentUpToFirstSpace
		{"agent value upper", "User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n", "Foo", "/a/b", false, ""},
		{"agent value upper allow", "User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n", "foo", "/x/y", true, ""},
		{"agent value lower", "User-Agent: foo bar\nAllow: /x/\nDisallow: /\n", "FOO", "/a/b", false, ""},
		{"agent value camel", "User-Agent: FoO bAr\nAllow: /x/\nDisallow: /\n", "foo", "/x/y", true, ""},
		{"agent up to first space", "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n", "Foo", "/x/y", true, ""},
		{"agent with space is no token", "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n", "Foo Bar", "/x/y", false, ""},
		{"agent version suffix", "User-agent: FooBot/2.1\nDisallow: /\n", "FooBot", "/x", false, ""},
		{"agent prefix is not a match", "User-agent: FooBotBar\nDisallow: /\n", "FooBot", "/x", true, ""},
		{"agent is not a prefix match", "User-agent: Foo\nDisallow: /\n", "FooBot", "/x", true, ""},
		{"weftbot is not weft", "User-agent: weftbot\nDisallow: /\nUser-agent: *\nAllow: /\n", "weft", "/x", true, ""},
		{"star with trailing text is global", "User-agent: * (all)\nDisallow: /\n", "FooBot", "/x", false, ""},
		{"star prefix is not global", "User-agent: *bot\nDisallow: /\n", "FooBot", "/x", true, ""},
		{"several user-agent lines", "User-agent: BarBot\nUser-agent: FooBot\nDisallow: /x\n", "FooBot", "/x", false, ""},

		// ID_GlobalGroups_Secondary
		{"no groups", "", "FooBot", "/x/y", true, ""},
		{"specific beats global", global, "FooBot", "/x/y", false, ""},
		{"global for others", global, "BarBot", "/x/y", true, ""},
		{"only specific groups, other agent", onlySpecific, "QuxBot", "/x/y", true, ""},
		{"specific group without matching rule ignores global", "User-agent: *\nDisallow: /\nUser-agent: FooBot\nAllow: /a\n", "FooBot", "/b", true, ""},
		{"star and specific in one group", "User-agent: *\nUser-agent: FooBot\nDisallow: /\n", "FooBot", "/x", false, ""},

		// ID_AllowDisallow_Value_CaseSensitive
		{"value case lower", "user-agent: FooBot\ndisallow: /x/\n", "FooBot", "/x/y", false, ""},
		{"value case upper", "user-agent: FooBot\ndisallow: /X/\n", "FooBot", "/x/y", true, ""},

		// ID_LongestMatch
		{"longest disallow", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/\n", "FooBot", "/x/page.html", false, ""},
		{"longest allow", "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", "FooBot", "/x/page.html", true, ""},
		{"longest allow, other path", "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", "FooBot", "/x/", false, ""},
		{"empty patterns", "user-agent: FooBot\ndisallow: \nallow: \n", "FooBot", "/x/page.html", true, ""},
		{"tie allow wins", "user-agent: FooBot\ndisallow: /\nallow: /\n", "FooBot", "/x/page.html", true, ""},
		{"tie allow wins, same path", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n", "FooBot", "/x/page.html", true, ""},
		{"longest /x vs /x/ a", "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot", "/x", false, ""},
		{"longest /x vs /x/ b", "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", "FooBot", "/x/", true, ""},
		{"wildcard length counts", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot", "/page.html", false, ""},
		{"wildcard length counts b", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", "FooBot", "/page", true, ""},
		{"wildcard shorter", "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", "FooBot", "/x/page.html", true, ""},
		{"wildcard shorter b", "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", "FooBot", "/x/y.html", false, ""},
		{"global rules ignored with specific", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", "FooBot", "/x/page", true, ""},
		{"specific rules apply", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", "FooBot", "/y/page", false, ""},

		// ID_Encoding
		{"query with reserved chars", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n", "FooBot",
			"/foo/bar?qux=taz&baz=http://foo.bar?tar&par", true, ""},
		{"utf-8 rule, encoded url", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n", "FooBot", "/foo/bar/%E3%83%84", true, ""},
		{"utf-8 rule, raw url", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n", "FooBot", "/foo/bar/ツ", true, ""},
		{"encoded rule, encoded url", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", "FooBot", "/foo/bar/%E3%83%84", true, ""},
		{"encoded rule, raw url", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", "FooBot", "/foo/bar/ツ", true, ""},
		{"lower-case escape in rule", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%e3%83%84\n", "FooBot", "/foo/bar/%E3%83%84", true, grobotstxtCaseBug},
		{"lower-case escape in rule spoils the others", "User-agent: FooBot\nDisallow: /\nAllow: /a%2F%e3\n", "FooBot", "/a%2F%E3", true, grobotstxtCaseBug},
		{"upper-case escapes in rule", "User-agent: FooBot\nDisallow: /\nAllow: /a%2F%E3\n", "FooBot", "/a%2F%E3", true, ""},
		{"lower-case escape in url", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", "FooBot", "/foo/bar/%e3%83%84", true,
			"RFC 9309 §2.2.2: hex digits compare case-insensitively; grobotstxt leaves the URL's escapes as net/url keeps them"},
		{"encoded unreserved in rule, raw url", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "FooBot", "/foo/bar/baz", true,
			"RFC 9309 §2.2.2: %62%61%7A is baz; Google's test asserts false and calls the rule illegal"},
		{"encoded unreserved in rule, same url", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "FooBot", "/foo/bar/%62%61%7A", true, ""},
		{"encoded unreserved in url", "User-agent: FooBot\nDisallow: /~joe/\n", "FooBot", "/%7Ejoe/index.html", false,
			"RFC 9309 §2.2.2: %7E is ~; grobotstxt compares octets as written"},
		{"encoded slash stays distinct", "User-agent: FooBot\nDisallow: /a/b\n", "FooBot", "/a%2Fb", true, ""},
		{"encoded slash stays distinct (rule)", "User-agent: FooBot\nDisallow: /a%2Fb\n", "FooBot", "/a/b", true, ""},
		{"encoded slash matches itself, any case", "User-agent: FooBot\nDisallow: /a%2fb\n", "FooBot", "/a%2Fb", false, grobotstxtCaseBug},
		{"space in rule", "User-agent: FooBot\nDisallow: /a b\n", "FooBot", "/a%20b", false,
			"a space may not appear raw in a URL: this package compares it as %20, grobotstxt never matches the rule"},
		{"invalid escape in url", "User-agent: FooBot\nDisallow: /private\n", "FooBot", "/100%zz", true,
			"grobotstxt disallows every URL net/url cannot parse; this package compares the stray '%' as %25"},
		{"non-ascii agent rules", "User-agent: FooBot\nDisallow: /caf\u00e9\n", "FooBot", "/caf%C3%A9/menu", false, ""},

		// ID_SpecialCharacters
		{"wildcard mid a", special1, "FooBot", "/foo/bar/quz", false, ""},
		{"wildcard mid b", special1, "FooBot", "/foo/quz", true, ""},
		{"wildcard mid c", special1, "FooBot", "/foo//quz", true, ""},
		{"wildcard mid d", special1, "FooBot", "/foo/bax/quz", true, ""},
		{"dollar a", special2, "FooBot", "/foo/bar", false, ""},
		{"dollar b", special2, "FooBot", "/foo/bar/qux", true, ""},
		{"dollar c", special2, "FooBot", "/foo/bar/", true, ""},
		{"dollar d", special2, "FooBot", "/foo/bar/baz", true, ""},
		{"comment in value a", special3, "FooBot", "/foo/bar", true, ""},
		{"comment in value b", special3, "FooBot", "/foo/quz", false, ""},
		{"dollar not at end is literal", "User-agent: FooBot\nDisallow: /a$b\n", "FooBot", "/a$b", false, ""},
		{"dollar not at end is literal b", "User-agent: FooBot\nDisallow: /a$b\n", "FooBot", "/a", true, ""},
		{"double dollar", "User-agent: FooBot\nDisallow: /a$$\n", "FooBot", "/a$", false, ""},
		{"double star", "User-agent: FooBot\nDisallow: /a**b\n", "FooBot", "/a/x/b", false, ""},
		{"star dollar", "User-agent: FooBot\nDisallow: /*$\n", "FooBot", "/anything?q", false, ""},
		{"star alone", "User-agent: FooBot\nDisallow: *\n", "FooBot", "/anything", false, ""},
		{"star in rule only at start", "User-agent: FooBot\nDisallow: *.gif$\n", "FooBot", "/img/a.gif", false, ""},
		{"star in rule only at start b", "User-agent: FooBot\nDisallow: *.gif$\n", "FooBot", "/img/a.gif?x", true, ""},

		// GoogleOnly_IndexHTMLisDirectory
		{"index.html allows dir", indexHTML, "foobot", "/allowed-slash/", true, ""},
		{"index.html not index.htm", indexHTML, "foobot", "/allowed-slash/index.htm", false, ""},
		{"index.html itself", indexHTML, "foobot", "/allowed-slash/index.html", true, ""},
		{"index.html other", indexHTML, "foobot", "/anyother-url", false, ""},

		// GoogleOnly_LineTooLong
		{"long disallow cut", longDRobots, "FooBot", "/fux", true, ""},
		{"long disallow cut matches", longDRobots, "FooBot", longD + "/fux", false, ""},
		{"long allow root", longRobots, "FooBot", "/", false, ""},
		{"long allow a", longRobots, "FooBot", longA + "/qux", true, ""},
		{"long allow b", longRobots, "FooBot", longB + "/fux", true, ""},

		// GoogleOnly_DocumentationChecks
		{"fish bar", fish, "FooBot", "/bar", false, ""},
		{"fish", fish, "FooBot", "/fish", true, ""},
		{"fish.html", fish, "FooBot", "/fish.html", true, ""},
		{"fish/salmon", fish, "FooBot", "/fish/salmon.html", true, ""},
		{"fishheads", fish, "FooBot", "/fishheads", true, ""},
		{"fish query", fish, "FooBot", "/fish.html?id=anything", true, ""},
		{"Fish case", fish, "FooBot", "/Fish.asp", false, ""},
		{"catfish", fish, "FooBot", "/catfish", false, ""},
		{"query fish", fish, "FooBot", "/?id=fish", false, ""},
		{"fish* heads", fishStar, "FooBot", "/fishheads/yummy.html", true, ""},
		{"fish* catfish", fishStar, "FooBot", "/catfish", false, ""},
		{"fish/ a", fishSlash, "FooBot", "/fish/?salmon", true, ""},
		{"fish/ b", fishSlash, "FooBot", "/fish", false, ""},
		{"fish/ c", fishSlash, "FooBot", "/Fish/Salmon.html", false, ""},
		{"php a", php, "FooBot", "/folder/filename.php?parameters", true, ""},
		{"php b", php, "FooBot", "//folder/any.php.file.html", true, ""},
		{"php c", php, "FooBot", "/", false, ""},
		{"php d", php, "FooBot", "/windows.PHP", false, ""},
		{"php$ a", phpEnd, "FooBot", "/folder/filename.php", true, ""},
		{"php$ b", phpEnd, "FooBot", "/filename.php?parameters", false, ""},
		{"php$ c", phpEnd, "FooBot", "/filename.php5", false, ""},
		{"fish*.php a", fishPhp, "FooBot", "/fishheads/catfish.php?parameters", true, ""},
		{"fish*.php b", fishPhp, "FooBot", "/Fish.PHP", false, ""},
		{"precedence /p", "user-agent: FooBot\nallow: /p\ndisallow: /\n", "FooBot", "/page", true, ""},
		{"precedence /folder", "user-agent: FooBot\nallow: /folder\ndisallow: /folder\n", "FooBot", "/folder/page", true, ""},
		{"precedence /*.htm", "user-agent: FooBot\nallow: /page\ndisallow: /*.htm\n", "FooBot", "/page.htm", false, ""},
		{"precedence /$ root", "user-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot", "/", true, ""},
		{"precedence /$ page", "user-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot", "/page.html", false, ""},

		// ID_UTF8ByteOrderMarkIsSkipped
		{"full BOM", "\xEF\xBB\xBFUser-Agent: foo\nDisallow: /AnyValue\n", "foo", "/AnyValue", false, ""},
		{"partial BOM 2", "\xEF\xBBUser-Agent: foo\nDisallow: /AnyValue\n", "foo", "/AnyValue", false, ""},
		{"partial BOM 1", "\xEFUser-Agent: foo\nDisallow: /AnyValue\n", "foo", "/AnyValue", false, ""},
		{"broken BOM", "\xEF\x11\xBFUser-Agent: foo\nDisallow: /AnyValue\n", "foo", "/AnyValue", true, ""},
		{"BOM mid-file", "User-Agent: foo\n\xEF\xBB\xBFDisallow: /AnyValue\n", "foo", "/AnyValue", true, ""},

		// ID_LinesNumbersAreCountedCorrectly: line endings
		{"LF", lineEnds, "bar", "/x", false, ""},
		{"LF foo", lineEnds, "foo", "/x", true, ""},
		{"CRLF", strings.ReplaceAll(lineEnds, "\n", "\r\n"), "bar", "/x", false, ""},
		{"CR only", strings.ReplaceAll(lineEnds, "\n", "\r"), "bar", "/x", false, ""},
		{"CR only foo", strings.ReplaceAll(lineEnds, "\n", "\r"), "foo", "/some/path", true, ""},
		{"no final newline", strings.TrimSuffix(lineEnds, "\n"), "bar", "/x", false, ""},
		{"mixed", "User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /", "bar", "/x", false, ""},

		// Google's accepted typos.
		{"typo disalow", "user-agent: FooBot\ndisalow: /\n", "FooBot", "/x", false, ""},
		{"typo useragent", "useragent: FooBot\ndisallow: /\n", "FooBot", "/x", false, ""},
		{"typo user agent", "user agent: FooBot\ndisallow: /\n", "FooBot", "/x", false, ""},

		// A typical file.
		{"typical specific", typical, "weft", "/private/x", false, ""},
		{"typical specific allow", typical, "weft", "/private/ok/1", true, ""},
		{"typical specific ignores global", typical, "weft", "/cgi-bin/x", true, ""},
		{"typical global", typical, "other", "/cgi-bin/x", false, ""},
		{"typical global wildcard", typical, "other", "/a?b=1&sessionid=2", true, ""},
		{"typical global wildcard query", typical, "other", "/a?sessionid=2", false, ""},
		{"typical global allow", typical, "other", "/tmp/public/a", true, ""},
		{"typical global disallow", typical, "other", "/tmp/private", false, ""},
		{"fragment ignored", typical, "weft", "/private#frag", false, ""},
		{"query only", "User-agent: *\nDisallow: /?\n", "weft", "?q=1", false, ""},

		// RFC 9309 §2.2.2: /robots.txt is always allowed.
		{"robots.txt allowed", "User-agent: *\nDisallow: /\n", "weft", "/robots.txt", true,
			"RFC 9309 §2.2.2: /robots.txt is implicitly allowed; grobotstxt applies the rules"},
	}
}

func TestAgreesWithGrobotstxt(t *testing.T) {
	cases := agreeCases()
	if len(cases) < 60 {
		t.Fatalf("only %d cases", len(cases))
	}
	differ := 0
	for _, tc := range cases {
		p := Parse([]byte(tc.robots), tc.agent, 200, time.Time{})
		got := p.Allowed(tc.path)
		google := grobotstxt.AgentAllowed(tc.robots, tc.agent, "http://foo.bar"+tc.path)
		if got != tc.want {
			t.Errorf("%s: Allowed(%q) = %v, want %v", tc.name, tc.path, got, tc.want)
		}
		if tc.differs == "" && google != tc.want {
			t.Errorf("%s: grobotstxt.AgentAllowed(%q) = %v, want %v", tc.name, tc.path, google, tc.want)
		}
		if tc.differs != "" {
			differ++
			if google == tc.want {
				t.Errorf("%s: grobotstxt agrees (%v), yet the case says it differs: %s", tc.name, google, tc.differs)
			}
		}
	}
	t.Logf("%d cases, %d intended disagreements", len(cases), differ)
}
