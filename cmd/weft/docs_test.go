package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// repoRoot is the repository's root, seen from this package's directory
// (where go test runs).
const repoRoot = "../.."

// The checked-in flag reference is what the flag definitions generate, so
// a flag added, renamed or given a new default cannot leave it behind.
func TestFlagReferenceUpToDate(t *testing.T) {
	var got bytes.Buffer
	if err := writeFlagReference(&got, newRootCmd()); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(repoRoot, flagReferencePath))
	if err != nil {
		t.Fatalf("%v: run go run ./cmd/weft docs flags > %s", err, flagReferencePath)
	}
	if !bytes.Equal(got.Bytes(), want) {
		gl, wl := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
		line := 0
		for line < len(gl) && line < len(wl) && gl[line] == wl[line] {
			line++
		}
		var g, w string
		if line < len(gl) {
			g = gl[line]
		}
		if line < len(wl) {
			w = wl[line]
		}
		t.Fatalf("%s is out of date: run go run ./cmd/weft docs flags > %s\nfirst difference at line %d:\n  generated: %s\n  checked in: %s",
			flagReferencePath, flagReferencePath, line+1, g, w)
	}
}

// weft docs flags prints the same reference the test compares.
func TestDocsFlagsCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"docs", "flags"}, &out, &errOut); code != 0 {
		t.Fatalf("weft docs flags: exit %d: %s", code, errOut.String())
	}
	var want bytes.Buffer
	if err := writeFlagReference(&want, newRootCmd()); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() {
		t.Error("weft docs flags printed something other than the reference")
	}
	for _, flag := range []string{"`--max-depth`", "`--recrawl-min`", "`--s3-bucket`", "`--at`", "`--urls`"} {
		if !strings.Contains(out.String(), flag) {
			t.Errorf("the reference lacks %s", flag)
		}
	}
}

// everyFlag is the name of every flag of every command, hidden ones
// included, with cobra's own --help and --version.
func everyFlag() map[string]bool {
	names := map[string]bool{"help": true, "version": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	return names
}

// flagMention is a --flag in prose: not part of a longer token, and with
// an optional -* for a family (--s3-*).
var flagMention = regexp.MustCompile(`(?:^|[^A-Za-z0-9_-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)(-\*)?`)

// otherPrograms start the command lines in docs/ whose flags are not
// weft's: the benchmarks' timer and the crawlers weft is compared with.
var otherPrograms = map[string]bool{"farm-bench": true, "wget2": true, "wget": true, "curl": true}

// userDocs are the Markdown files written for people: the README and
// everything in docs/.
func userDocs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(repoRoot, "README.md")}, files...)
}

// Every --flag the README and docs/ name is one weft has: a flag renamed
// or removed in the code cannot stay documented.
func TestDocumentedFlagsExist(t *testing.T) {
	flags := everyFlag()
	checked := 0
	for _, file := range userDocs(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) > 0 && otherPrograms[f[0]] {
				continue // a command line of another program: its flags are its own
			}
			for _, m := range flagMention.FindAllStringSubmatch(line, -1) {
				name, family := m[1], m[2] != ""
				checked++
				if family {
					if !slices.ContainsFunc(keys(flags), func(f string) bool { return strings.HasPrefix(f, name+"-") }) {
						t.Errorf("%s:%d: --%s-* names no flag of weft", file, i+1, name)
					}
					continue
				}
				if !flags[name] {
					t.Errorf("%s:%d: --%s is not a flag of any weft command", file, i+1, name)
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d flag mentions found in the docs: is the pattern wrong?", checked)
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The README's Layout table names every package under internal/ and none
// that does not exist.
func TestReadmeLayoutMatchesPackages(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(data), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no ## Layout section")
	}
	if end := strings.Index(layout, "\n## "); end >= 0 {
		layout = layout[:end]
	}
	listed := map[string]bool{}
	// A row's first cell names one package or several: `internal/a`, `internal/b`.
	name := regexp.MustCompile("`internal/([a-z0-9]+)`")
	for _, row := range regexp.MustCompile("(?m)^\\| ([^|]*) \\|").FindAllStringSubmatch(layout, -1) {
		for _, m := range name.FindAllStringSubmatch(row[1], -1) {
			listed[m[1]] = true
		}
	}
	dirs, err := os.ReadDir(filepath.Join(repoRoot, "internal"))
	if err != nil {
		t.Fatal(err)
	}
	exist := map[string]bool{}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		goFiles, _ := filepath.Glob(filepath.Join(repoRoot, "internal", d.Name(), "*.go"))
		if len(goFiles) > 0 {
			exist[d.Name()] = true
		}
	}
	for p := range exist {
		if !listed[p] {
			t.Errorf("internal/%s is not in the README's Layout table", p)
		}
	}
	for p := range listed {
		if !exist[p] {
			t.Errorf("the README's Layout table lists internal/%s, which does not exist", p)
		}
	}
}

// The README stays a user's guide: at most 350 lines, the rest in docs/.
func TestReadmeLength(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n > 350 {
		t.Errorf("README.md has %d lines, more than 350: move detail to docs/", n)
	}
}

// The bounds issue 34 set the house: docs/benchmarks.md holds the current
// figures in at most 250 lines, and internal/crawl, the loop that wires
// everything, stays under 5,000 lines of code (its tests not counted):
// what grows there belongs in a package of its own.
func TestHouseBounds(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n > 250 {
		t.Errorf("docs/benchmarks.md has %d lines, more than 250: keep the current figures, history is in git", n)
	}
	files, err := filepath.Glob(filepath.Join(repoRoot, "internal", "crawl", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(data, []byte("\n"))
	}
	if lines >= 5000 {
		t.Errorf("internal/crawl has %d lines of code, 5,000 or more: move what grew to a package of its own", lines)
	}
}

// The README opens with the two commands a fresh machine runs, and .ci/run
// runs exactly the README's test command.
func TestReadmeTestCommandIsCIs(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "```sh\n")
	if !ok {
		t.Fatal("README.md opens with no ```sh block")
	}
	block, _, _ = strings.Cut(block, "```")
	var cmds []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	if len(cmds) != 2 || cmds[0] != "go run ./cmd/weft demo" || !strings.HasPrefix(cmds[1], "go test ") {
		t.Fatalf("README.md's first block is %q, want the demo and the test command", cmds)
	}
	ci, err := os.ReadFile(filepath.Join(repoRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Split(string(ci), "\n"), cmds[1]) {
		t.Errorf(".ci/run does not run the README's test command %q on a line of its own", cmds[1])
	}
}
