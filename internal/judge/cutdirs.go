package judge

import (
	"strconv"
	"strings"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/scope"
)

// What a host's near-duplicate window knows of where its copies are, and
// what of the host is cut off for them: store.HostState.NearDirs, a line
// for each round of the window (the current one, then the one before:
// a round is as many pages as the window), then a line for each
// directory cut off. A round's line is the deepest directory its
// near-duplicates are all under, how deep (in path segments) the deepest
// of them is, and, as a third field when there is one, the segment at
// which they had a generated token (dirCut); a cut's line is the
// directory, that depth and that segment: it
// refuses a URL under the directory as deep as its copies were, or less,
// so that a shop's products under /collections/shoes/products/, one
// segment deeper than its filters' copies (/collections/shoes/red+wool),
// are still fetched. Copies of one path under other queries
// (/collections/shoes?sort_by=price) are under their path and '?', which
// refuses the path's other queries only. A round's line is "" when it
// had no near-duplicate; NearDirs is "" when all are. A canonical path
// holds no tab, newline or '?' (they are escaped).
type nearDirs struct {
	cur, prev dirCut // where a round's near-duplicates are ("" for none), and how deep the deepest is
	cuts      cuts
}

// dirCut is a directory cut off, and how deep under it: a URL under it of
// at most depth segments is refused; or a path and '?', whose other
// queries are. When the copies that had a generated token (scope.IsToken:
// a commit's hash, a session id) all had it as their token-th segment,
// only a URL with one there is refused: a forge's files at each commit
// (/alice/app/src/commit/9f3a…/main.go, …/blame/commit/9f3a…/main.go) are
// copies under the repository's directory, and its files as they are now
// (/alice/app/src/branch/main/main.go) and its commits
// (/alice/app/commit/9f3a…) are not. Of a Gitea-like forge of two
// repositories, 60 commits each, a cut of each repository's directory
// lost 77 of the 120 commit pages; cut so, none. Copies without a token
// (the main files' histories) are left to the window: should they fill it
// again, they cut the directory whole.
type dirCut struct {
	dir   string
	depth int
	token int // 0 for none
}

// cuts is the lines of the directories cut off, each ended by '\n'.
type cuts string

// The bounds of what a host's state keeps: a host with copies in more
// directories than maxCutDirs is a host of copies, and is cut off whole;
// a directory is at most a path's first maxDirBytes bytes (a shallower
// cut than the copies' directory bounds them all the same).
const (
	maxCutDirs  = 8
	maxDirBytes = 128
)

func parseNearDirs(s string) nearDirs {
	if s == "" {
		return nearDirs{}
	}
	cur, rest, _ := strings.Cut(s, "\n")
	prev, cs, _ := strings.Cut(rest, "\n")
	return nearDirs{cur: parseDirCut(cur), prev: parseDirCut(prev), cuts: cuts(cs)}
}

// String is the NearDirs parseNearDirs reads.
func (d nearDirs) String() string {
	if d == (nearDirs{}) {
		return ""
	}
	var b strings.Builder
	b.Grow(len(d.cur.dir) + len(d.prev.dir) + len(d.cuts) + 16)
	for _, r := range [...]dirCut{d.cur, d.prev} {
		b.WriteString(r.line())
		b.WriteByte('\n')
	}
	b.WriteString(string(d.cuts))
	return b.String()
}

// copy notes a near-duplicate at u in the current round.
func (d *nearDirs) copy(u canon.URL) {
	dir := dirOf(u.Path)
	if u.Query != "" && len(u.Path) < maxDirBytes {
		dir = u.Path + "?"
	}
	if len(dir) > maxDirBytes {
		dir = dir[:maxDirBytes]
	}
	token := tokenSegment(u.Path)
	if d.cur.dir != "" {
		dir = commonDir(d.cur.dir, dir)
		token = sameToken(d.cur.token, token)
	}
	d.cur = dirCut{dir: dir, depth: max(d.cur.depth, pathDepth(u.Path)), token: token}
}

// under is the directory the near-duplicates of both rounds are under,
// and how deep the deepest is.
func (d nearDirs) under() dirCut {
	switch {
	case d.prev.dir == "":
		return d.cur
	case d.cur.dir == "":
		return d.prev
	}
	return dirCut{dir: commonDir(d.cur.dir, d.prev.dir), depth: max(d.cur.depth, d.prev.depth), token: sameToken(d.cur.token, d.prev.token)}
}

// line is c as a line of NearDirs, without its '\n'; "" for none. The
// token's field is left out when it is 0, as a build before tokens wrote
// it.
func (c dirCut) line() string {
	if c.dir == "" {
		return ""
	}
	line := c.dir + "\t" + strconv.Itoa(c.depth)
	if c.token != 0 {
		line += "\t" + strconv.Itoa(c.token)
	}
	return line
}

// name is how a report names c: its directory, and where its token is
// ("a.test/alice/app/ token@5").
func (c dirCut) name() string {
	if c.token <= 0 {
		return c.dir
	}
	return c.dir + " token@" + strconv.Itoa(c.token)
}

// parseDirCut reads a line ("" for none); a depth that does not read is
// no bound, a token that does not read none.
func parseDirCut(line string) dirCut {
	if line == "" {
		return dirCut{}
	}
	dir, rest, _ := strings.Cut(line, "\t")
	depth, token, _ := strings.Cut(rest, "\t")
	n, err := strconv.Atoi(depth)
	if err != nil {
		n = maxPathDepth
	}
	tk, err := strconv.Atoi(token)
	if err != nil || tk < mixedTokens {
		tk = 0
	}
	return dirCut{dir: dir, depth: n, token: tk}
}

// tokenSegment is the number of path's first segment that is a generated
// token (scope.IsToken, its extension aside), from 1; 0 for none.
func tokenSegment(path string) int {
	n := 0
	for seg := range strings.SplitSeq(strings.TrimPrefix(path, "/"), "/") {
		n++
		if stem, _, _ := strings.Cut(seg, "."); scope.IsToken(stem) {
			return n
		}
	}
	return 0
}

// sameToken is the token segment of copies whose own were a and b (0 for
// none, mixedTokens for copies that disagreed): the one they have, if
// they agree; a copy without one (a page's raw or blame view, each page's
// own) does not disagree, and a disagreement stays one.
func sameToken(a, b int) int {
	switch {
	case a == mixedTokens || b == mixedTokens || a != 0 && b != 0 && a != b:
		return mixedTokens
	case a == 0:
		return b
	}
	return a
}

// mixedTokens is the token segment of a round whose copies had tokens at
// different segments: its cut is of the whole directory.
const mixedTokens = -1

// asCut is the round c as a directory cut off: a cut of a path's queries,
// or of copies whose tokens disagreed, has none.
func (c dirCut) asCut() dirCut {
	if c.token < 0 || strings.HasSuffix(c.dir, "?") {
		c.token = 0
	}
	return c
}

// hasToken reports whether path's n-th segment is a generated token.
func hasToken(path string, n int) bool {
	i := 0
	for seg := range strings.SplitSeq(strings.TrimPrefix(path, "/"), "/") {
		if i++; i == n {
			stem, _, _ := strings.Cut(seg, ".")
			return scope.IsToken(stem)
		}
	}
	return false
}

// maxPathDepth is deeper than any path a crawl admits.
const maxPathDepth = 1 << 16

// refuse reports whether u is in one of the directories cut: under it,
// as deep as its copies or less (the directory's own page is not), with
// a token where they had one, or, for a path and '?', the path with
// another query.
func (cs cuts) refuse(u canon.URL) bool {
	for rest := string(cs); rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		dir, _, _ := strings.Cut(line, "\t")
		if path, ok := strings.CutSuffix(dir, "?"); ok {
			if u.Path == path && u.Query != "" {
				return true
			}
			continue
		}
		if dir == "" || len(u.Path) <= len(dir) || !strings.HasPrefix(u.Path, dir) {
			continue
		}
		if c := parseDirCut(line); pathDepth(u.Path) <= c.depth && (c.token <= 0 || hasToken(u.Path, c.token)) {
			return true
		}
	}
	return false
}

// has reports whether c's directory is cut off as c would cut it: whole,
// or, for a cut with a token, with a token anywhere. A directory is cut
// at most twice, by its tokens' copies and then whole; copies that would
// cut it again cut off the host.
func (cs cuts) has(c dirCut) bool {
	for rest := string(cs); rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if d := parseDirCut(line); d.dir == c.dir && (d.token == 0 || c.token != 0) {
			return true
		}
	}
	return false
}

// len is the number of directories cut off.
func (cs cuts) len() int { return strings.Count(string(cs), "\n") }

// with is cs and c.
func (cs cuts) with(c dirCut) cuts { return cs + cuts(c.line()+"\n") }

// pathDepth is the number of segments of path: 2 for /a/b and /a/b/, 0
// for /.
func pathDepth(path string) int {
	n := strings.Count(path, "/")
	if strings.HasSuffix(path, "/") {
		n--
	}
	return n
}

// dirOf is the directory of path: up to its last '/' ("/" for none).
func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i+1]
	}
	return "/"
}

// commonDir is the deepest directory both directories a and b are under
// (or are); a directory may be a path's first maxDirBytes bytes, which
// is its own when both are it.
func commonDir(a, b string) string {
	if a == b {
		return a
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return dirOf(a[:i])
}
