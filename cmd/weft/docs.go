package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/weft-crawler/weft/internal/bytesize"
	"github.com/weft-crawler/weft/internal/version"
)

// flagReferencePath is where the generated flag reference is checked in,
// relative to the repository's root.
const flagReferencePath = "docs/flags.md"

func newDocsCmd() *cobra.Command {
	docs := &cobra.Command{
		Use:   "docs",
		Short: "Print documentation generated from the code",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	docs.AddCommand(&cobra.Command{
		Use:   "flags",
		Short: "Print the reference of every command's flags as Markdown (docs/flags.md)",
		Long: `Print the reference of every command's flags, as Markdown, from the flag
definitions themselves: the checked-in docs/flags.md is this output, and a
test fails when the two differ. Regenerate it with

  go run ./cmd/weft docs flags > docs/flags.md`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeFlagReference(cmd.OutOrStdout(), cmd.Root())
		},
	})
	return docs
}

// documentedCommands lists root and every command under it that a user
// sees (hidden ones, which weft runs itself, are left out), in the order
// of the tree with each level sorted by name.
func documentedCommands(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		out = append(out, c)
		for _, sub := range c.Commands() { // cobra sorts them by name
			walk(sub)
		}
	}
	walk(root)
	return out
}

// flagEntry is one flag as the reference shows it.
type flagEntry struct{ name, typ, def, usage string }

func commandFlags(c *cobra.Command) []flagEntry {
	var out []flagEntry
	c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			// cobra adds --help to the command it runs; the
			// reference's header names it once for all.
			return
		}
		def := f.DefValue
		// The default user agent carries the build's version; the
		// reference is the same whatever the build says it is.
		def = strings.ReplaceAll(def, version.Version, "<version>")
		out = append(out, flagEntry{name: f.Name, typ: f.Value.Type(), def: def, usage: f.Usage})
	})
	return out
}

// writeFlagReference writes the Markdown reference of every documented
// command's flags. A command whose flags include all of an earlier
// command's, alike, names that command and lists only the rest, so that
// weft serve's table does not repeat weft crawl's.
func writeFlagReference(w io.Writer, root *cobra.Command) error {
	var b strings.Builder
	b.WriteString("# Flag reference\n\n")
	b.WriteString("Generated from the flag definitions by `go run ./cmd/weft docs flags > docs/flags.md`;\n")
	b.WriteString("do not edit it by hand: `TestFlagReferenceUpToDate` fails when it differs from\n")
	b.WriteString("what the code defines. Every command also takes `--help` (`-h`), and `weft\n")
	b.WriteString("--version` prints the version. A repeatable flag (type `stringArray`) is given\n")
	b.WriteString("once per value. A flag of type `size` (and its key in a profile) takes\n")
	b.WriteString(bytesize.Syntax + ".\n")

	type done struct {
		path  string
		flags map[string]flagEntry
	}
	var earlier []done
	for _, c := range documentedCommands(root) {
		if c == root {
			continue
		}
		flags := commandFlags(c)
		fmt.Fprintf(&b, "\n## `%s`\n\n%s.\n", c.CommandPath(), strings.TrimSuffix(c.Short, "."))
		if len(flags) == 0 {
			b.WriteString("\nNo flags.\n")
			continue
		}
		byName := make(map[string]flagEntry, len(flags))
		for _, f := range flags {
			byName[f.name] = f
		}
		shown := flags
		for _, e := range earlier {
			if len(e.flags) < 2 || !includesAll(byName, e.flags) {
				continue
			}
			fmt.Fprintf(&b, "\nEvery flag of `%s`, and:\n", e.path)
			shown = nil
			for _, f := range flags {
				if _, ok := e.flags[f.name]; !ok {
					shown = append(shown, f)
				}
			}
			break
		}
		b.WriteString("\n| flag | type | default | meaning |\n|---|---|---|---|\n")
		for _, f := range shown {
			fmt.Fprintf(&b, "| `--%s` | %s | %s | %s |\n", f.name, f.typ, mdDefault(f), mdCell(f.usage))
		}
		earlier = append(earlier, done{c.CommandPath(), byName})
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func includesAll(have, want map[string]flagEntry) bool {
	for name, f := range want {
		if have[name] != f {
			return false
		}
	}
	return true
}

func mdDefault(f flagEntry) string {
	switch {
	case f.def == "" || f.def == "[]":
		return ""
	default:
		return "`" + f.def + "`"
	}
}

// mdCell makes text safe in a Markdown table cell: a pipe would end the
// cell and angle brackets would be read as HTML.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "\n", " ").Replace(s)
}
