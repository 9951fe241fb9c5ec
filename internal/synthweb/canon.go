package synthweb

import (
	"slices"
	"strings"
)

// isDroppedParam reports whether a query key is a tracking or session
// parameter that canonical URLs omit.
func isDroppedParam(key string) bool {
	k := strings.ToLower(key)
	return strings.HasPrefix(k, "utm_") || k == "gclid" || k == "fbclid" ||
		k == "phpsessid" || k == "jsessionid" || k == "sid"
}

// canonicalPath maps a request's path and raw query to the canonical
// path+query used as page key, so that a page requested with tracking or
// session parameters, or a reordered query, is served like any real server
// would serve it. Tests still see the raw request in the log.
func canonicalPath(path, rawQuery string) string {
	for {
		i := strings.Index(strings.ToLower(path), ";jsessionid=")
		if i < 0 {
			break
		}
		j := strings.IndexByte(path[i+1:], '/')
		if j < 0 {
			path = path[:i]
		} else {
			path = path[:i] + path[i+1+j:]
		}
	}
	if path == "" {
		path = "/"
	}
	if rawQuery == "" {
		return path
	}
	type kv struct{ k, v string }
	var params []kv
	for part := range strings.SplitSeq(rawQuery, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		if isDroppedParam(k) {
			continue
		}
		params = append(params, kv{k, v})
	}
	if len(params) == 0 {
		return path
	}
	slices.SortFunc(params, func(a, b kv) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		return strings.Compare(a.v, b.v)
	})
	var b strings.Builder
	b.WriteString(path)
	for i, p := range params {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String()
}

// splitQuery splits a canonical path+query at "?".
func splitQuery(pq string) (path, query string) {
	path, query, _ = strings.Cut(pq, "?")
	return path, query
}

// dirOf returns the directory part of a path, including the final "/".
func dirOf(path string) string {
	return path[:strings.LastIndexByte(path, '/')+1]
}

// appendRelative appends a path-relative reference from directory dir
// (ending in "/") to the absolute path target, e.g. "../p/3".
func appendRelative(dst []byte, dir, target string, dotSlash bool) []byte {
	common := 0
	for i := 0; i < len(dir) && i < len(target) && dir[i] == target[i]; i++ {
		if dir[i] == '/' {
			common = i + 1
		}
	}
	start := len(dst)
	for i := common; i < len(dir); i++ {
		if dir[i] == '/' {
			dst = append(dst, "../"...)
		}
	}
	rest := target[common:]
	if len(dst) == start && (dotSlash || rest == "") {
		dst = append(dst, "./"...)
	}
	return append(dst, rest...)
}
