// Package profile reads and writes crawl profiles: one TOML file that
// holds a command's flag settings, its seed URLs and per-host policies.
//
//	delay = "2s"
//	max-pages = 10000
//	include = ['^https://shop\.example/(c|p)/']
//	urls = ["https://shop.example/"]
//
//	[policies."shop.example"]
//	crawl_delay = "5s"
//	disallowed = ["/cart/"]
//	boosts = [{pattern = "/p/*", factor = 4}]
//
// Every top-level key is the name of a flag of the command, read through
// the flag's own parser: the profile knows no list of settings, so a flag
// added to the command is a key of the profile at once. "urls" are the
// seeds given as arguments, each a URL that may carry its seed's own
// limits as a line of a --seeds file does ("https://shop.example/
// scope=host depth=3 max-pages=500": package seeds), and each
// [policies."host"] table is the
// object a --policy file gives the host and PUT /v1/policies/{host}
// takes (package policy reads all three). A flag given on the command
// line overrides the file. Every error names the file, the line and the
// key.
//
// TOML rather than YAML: a profile is flat settings plus a table per host,
// which TOML writes plainly; its values have one type each (YAML reads
// "no" as false and "1:30" as a number of seconds); and its decoder,
// github.com/pelletier/go-toml/v2, gives the position of every key.
package profile

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
	"github.com/spf13/pflag"

	"github.com/weft-crawler/weft/internal/bytesize"
	"github.com/weft-crawler/weft/internal/policy"
)

// Keys of a profile that are not flags.
const (
	KeyURLs     = "urls"
	KeyPolicies = "policies"
)

// SecretAnnotation marks a flag whose value a printed profile leaves out
// (pflag.FlagSet.SetAnnotation(name, SecretAnnotation, ...)).
const SecretAnnotation = "weft-secret"

// Error is a fault in a profile: the file, the line (1-based) and the key
// (a flag's name, "urls", or policies."host".field).
type Error struct {
	File  string
	Line  int
	Field string
	Err   error
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s: %v", e.File, e.Line, e.Field, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Profile is a parsed profile.
type Profile struct {
	File string
	// URLs are the seed URLs it gives; nil if none.
	URLs     []string
	urlsLine int
	settings []setting
	policies []hostPolicy
	// applied maps the flags Apply set to the line that set them.
	applied map[string]int
}

type setting struct {
	key   string
	value any
	line  int
}

type hostPolicy struct {
	host   string
	line   int
	names  []string // its fields, in file order
	values []any
	lines  map[string]int // field -> line
}

// Load reads the profile at path.
func Load(path string) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	return Parse(path, data)
}

// Parse reads a profile's text; file names it in errors.
func Parse(file string, data []byte) (*Profile, error) {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, _ := de.Position()
			return nil, &Error{File: file, Line: line, Field: keyName(de.Key()), Err: errors.New(strings.TrimPrefix(de.Error(), "toml: "))}
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	lines, err := keyLines(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	p := &Profile{File: file}
	fail := func(line int, field, format string, args ...any) error {
		return &Error{File: file, Line: line, Field: field, Err: fmt.Errorf(format, args...)}
	}
	keys := slices.SortedFunc(maps.Keys(doc), func(a, b string) int { return lines[a] - lines[b] })
	for _, k := range keys {
		v, line := doc[k], lines[k]
		switch k {
		case KeyURLs:
			urls, ok := strings_(v)
			if !ok {
				return nil, fail(line, k, "want a list of URLs, such as [\"https://example.org/\"]")
			}
			p.URLs, p.urlsLine = urls, line
		case KeyPolicies:
			hosts, ok := v.(map[string]any)
			if !ok {
				return nil, fail(line, k, `want tables of policies by host, such as [policies."example.org"]`)
			}
			for _, h := range slices.SortedFunc(maps.Keys(hosts), func(a, b string) int { return lines[k+"\x00"+a] - lines[k+"\x00"+b] }) {
				hp := hostPolicy{host: h, line: lines[k+"\x00"+h], lines: map[string]int{}}
				fields, ok := hosts[h].(map[string]any)
				if !ok {
					return nil, fail(hp.line, policyKey(h, ""), "want a table of the host's policy (crawl_delay, disallowed, max_urls)")
				}
				for _, f := range slices.SortedFunc(maps.Keys(fields), func(a, b string) int {
					return lines[k+"\x00"+h+"\x00"+a] - lines[k+"\x00"+h+"\x00"+b]
				}) {
					hp.names = append(hp.names, f)
					hp.values = append(hp.values, fields[f])
					hp.lines[f] = lines[k+"\x00"+h+"\x00"+f]
				}
				p.policies = append(p.policies, hp)
			}
		default:
			if _, ok := v.(map[string]any); ok {
				return nil, fail(line, k, "a flag's value is not a table")
			}
			p.settings = append(p.settings, setting{key: k, value: v, line: line})
		}
	}
	return p, nil
}

// keyLines maps every key of a TOML document, its path joined by NUL, to
// the line it is on (a table's to its header's).
func keyLines(data []byte) (map[string]int, error) {
	lines := map[string]int{}
	var p unstable.Parser
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		var path []string
		line := 0
		for it := e.Key(); it.Next(); {
			k := it.Node()
			path = append(path, string(k.Data))
			if line == 0 {
				line = p.Shape(k.Raw).Start.Line
			}
		}
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = path
			for i := range path {
				if key := strings.Join(path[:i+1], "\x00"); lines[key] == 0 {
					lines[key] = line
				}
			}
		case unstable.KeyValue:
			full := append(slices.Clone(table), path...)
			for i := len(table); i < len(full); i++ {
				if key := strings.Join(full[:i+1], "\x00"); lines[key] == 0 {
					lines[key] = line
				}
			}
		}
	}
	return lines, p.Error()
}

func keyName(parts []string) string {
	if len(parts) == 0 {
		return "(document)"
	}
	return strings.Join(parts, ".")
}

func policyKey(host, field string) string {
	k := KeyPolicies + "." + strconv.Quote(host)
	if field != "" {
		k += "." + field
	}
	return k
}

// strings_ is v as a list of strings.
func strings_(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(list))
	for i, e := range list {
		if out[i], ok = e.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

// Apply sets each flag the profile names that the command line has not
// set (fs's Changed), through the flag's own parser; it leaves the flag
// marked as changed. A key that is no flag of fs, or one of reserved
// (which a profile cannot set, such as the flag naming the profile), is
// an error.
func (p *Profile) Apply(fs *pflag.FlagSet, reserved ...string) error {
	p.applied = map[string]int{}
	for _, s := range p.settings {
		fail := func(format string, args ...any) error {
			return &Error{File: p.File, Line: s.line, Field: s.key, Err: fmt.Errorf(format, args...)}
		}
		if slices.Contains(reserved, s.key) {
			return fail("cannot be set in a profile")
		}
		fl := fs.Lookup(s.key)
		if fl == nil {
			return fail("no such setting: a key is a flag's name without its dashes (see docs/flags.md), %q or [%s.\"host\"] tables", KeyURLs, KeyPolicies)
		}
		if fl.Changed {
			continue // the command line wins
		}
		if err := set(fl, s.value); err != nil {
			return fail("%v", err)
		}
		fl.Changed = true
		p.applied[s.key] = s.line
	}
	return nil
}

// set gives a flag a TOML value, by the flag's type.
func set(fl *pflag.Flag, v any) error {
	typ := fl.Value.Type()
	if sv, ok := fl.Value.(pflag.SliceValue); ok {
		list, ok := strings_(v)
		if !ok {
			return fmt.Errorf("want a list of strings, such as [\"a\", \"b\"] (%s)", typ)
		}
		return sv.Replace(list)
	}
	var s string
	switch v := v.(type) {
	case bool:
		if typ != "bool" {
			return fmt.Errorf("want %s, not true or false", want(typ))
		}
		s = strconv.FormatBool(v)
	case int64:
		if !isInt(typ) && !isFloat(typ) && typ != bytesize.Type {
			return fmt.Errorf("want %s, not a number", want(typ))
		}
		s = strconv.FormatInt(v, 10)
	case float64:
		if !isFloat(typ) {
			return fmt.Errorf("want %s, not %v", want(typ), v)
		}
		s = strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		if typ == "bool" || isInt(typ) || isFloat(typ) {
			return fmt.Errorf("want %s, not the string %q", want(typ), v)
		}
		s = v
	default:
		return fmt.Errorf("want %s", want(typ))
	}
	return fl.Value.Set(s)
}

func isInt(typ string) bool {
	switch typ {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "count":
		return true
	}
	return false
}

func isFloat(typ string) bool { return typ == "float64" || typ == "float32" }

// want names what a flag of type typ takes in a profile.
func want(typ string) string {
	switch {
	case typ == "bool":
		return "true or false"
	case isInt(typ):
		return "a whole number"
	case isFloat(typ):
		return "a number"
	case typ == "duration":
		return `a duration in a string, such as "1m30s"`
	case typ == bytesize.Type:
		return `a size: a number of bytes, or a string such as "10MiB"`
	}
	return "a string"
}

// Locate turns err, an error about the settings, into one naming the line
// of the first flag it names ("--delay ...") that the profile set; other
// errors are returned as they are.
func (p *Profile) Locate(err error) error {
	if p == nil || err == nil {
		return err
	}
	msg := err.Error()
	best, bestAt := "", len(msg)
	for name := range p.applied {
		if at := flagAt(msg, name); at >= 0 && at < bestAt {
			best, bestAt = name, at
		}
	}
	if best == "" {
		return err
	}
	return &Error{File: p.File, Line: p.applied[best], Field: best, Err: err}
}

// flagAt is where "--name" stands in msg as a whole flag name, or -1.
func flagAt(msg, name string) int {
	for from := 0; ; {
		i := strings.Index(msg[from:], "--"+name)
		if i < 0 {
			return -1
		}
		i += from
		end := i + 2 + len(name)
		if end == len(msg) || !(msg[end] == '-' || msg[end] >= 'a' && msg[end] <= 'z' || msg[end] >= '0' && msg[end] <= '9') {
			return i
		}
		from = end
	}
}

// AtURLs places err, a fault of the profile's urls, at their line.
func (p *Profile) AtURLs(err error) error {
	return &Error{File: p.File, Line: p.urlsLine, Field: KeyURLs, Err: err}
}

// HasPolicies reports whether the profile has [policies."host"] tables.
func (p *Profile) HasPolicies() bool { return p != nil && len(p.policies) > 0 }

// PolicySet makes the profile's policies, within the crawl's limits;
// errors name the line and the field.
func (p *Profile) PolicySet(lim policy.Limits) (*policy.Set, error) {
	s := policy.NewSet(lim)
	seen := map[string]string{}
	for _, hp := range p.policies {
		fail := func(field string, err error) error {
			line := hp.line
			if l, ok := hp.lines[field]; ok {
				line = l
			}
			return &Error{File: p.File, Line: line, Field: policyKey(hp.host, field), Err: err}
		}
		pol, err := policy.FromFields(hp.names, hp.values)
		var fe *policy.FieldError
		if errors.As(err, &fe) {
			return nil, fail(fe.Field, errors.New(fe.Msg))
		} else if err != nil {
			return nil, fail("", err)
		}
		h, err := policy.NormalHost(hp.host)
		if err != nil {
			return nil, fail("", err)
		}
		if first, dup := seen[h]; dup {
			return nil, fail("", fmt.Errorf("a second policy for %s (the first is [%s.%q])", h, KeyPolicies, first))
		}
		seen[h] = hp.host
		if err := s.Put(h, pol); err != nil {
			if errors.As(err, &fe) {
				return nil, fail(fe.Field, err)
			}
			return nil, fail("", err)
		}
	}
	return s, nil
}

// Print writes a profile of the settings in effect in fs: each flag not
// at its default as a key, those at their defaults commented out after
// them (a printed profile lists every setting there is), then urls, then
// the policies by host. Flags that skip names, and secret ones, are left
// out. Loading what it writes and printing again writes the same text.
func Print(w io.Writer, command string, fs *pflag.FlagSet, skip []string, urls []string, policies map[string]policy.Policy) error {
	var set, defaults strings.Builder
	fs.VisitAll(func(fl *pflag.Flag) {
		// A deprecated flag sets what its successor prints.
		if fl.Name == "help" || slices.Contains(skip, fl.Name) || fl.Annotations[SecretAnnotation] != nil || fl.Deprecated != "" {
			return
		}
		line := fl.Name + " = " + value(fl) + "\n"
		if fl.Value.String() == fl.DefValue {
			defaults.WriteString("# " + line)
		} else {
			set.WriteString(line)
		}
	})
	var b strings.Builder
	fmt.Fprintf(&b, "# weft %s profile (weft config print). Each key is a flag of weft %s\n", command, command)
	b.WriteString("# (docs/flags.md); a flag on the command line overrides the file.\n\n")
	b.WriteString(set.String())
	if len(urls) > 0 {
		b.WriteString(KeyURLs + " = " + array(urls) + "\n")
	}
	if defaults.Len() > 0 {
		b.WriteString("\n# At their defaults:\n")
		b.WriteString(defaults.String())
	}
	for _, h := range slices.Sorted(maps.Keys(policies)) {
		fmt.Fprintf(&b, "\n[%s.%s]\n", KeyPolicies, quote(h))
		policies[h].Fields(func(name string, v any) {
			switch v := v.(type) {
			case string:
				fmt.Fprintf(&b, "%s = %s\n", name, quote(v))
			case []string:
				fmt.Fprintf(&b, "%s = %s\n", name, array(v))
			case []policy.PatternBoost:
				tables := make([]string, len(v))
				for i, pb := range v {
					tables[i] = fmt.Sprintf("{pattern = %s, factor = %v}", quote(pb.Pattern), pb.Factor)
				}
				fmt.Fprintf(&b, "%s = [%s]\n", name, strings.Join(tables, ", "))
			default:
				fmt.Fprintf(&b, "%s = %v\n", name, v)
			}
		})
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// value is a flag's value in TOML.
func value(fl *pflag.Flag) string {
	if sv, ok := fl.Value.(pflag.SliceValue); ok {
		return array(sv.GetSlice())
	}
	switch typ := fl.Value.Type(); {
	case typ == "bool", isInt(typ), isFloat(typ):
		return fl.Value.String()
	}
	return quote(fl.Value.String())
}

func array(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = quote(v)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// quote writes s as a TOML string: a literal string ('...', no escapes)
// when it has backslashes and can be one, as regular expressions do, else
// a basic one.
func quote(s string) string {
	literal := strings.Contains(s, `\`) && !strings.Contains(s, "'")
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			literal = false
		}
	}
	if literal {
		return "'" + s + "'"
	}
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
