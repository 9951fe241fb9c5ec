package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/profile"
)

func newConfigCmd() *cobra.Command {
	cfg := &cobra.Command{
		Use:   "config",
		Short: "Show crawl profiles (--config FILE)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cfg.AddCommand(&cobra.Command{
		Use:   "print [crawl|serve] [FLAGS] [SEED...]",
		Short: "Print the configuration in effect as a profile: the flags, --config's file, the seeds and the per-host policies",
		Long: `Print, as a TOML profile that --config reads, the configuration weft crawl
(or weft serve) would run with given these flags: --config's file, the flags
on the command line over it, the seeds, and the per-host policies of the
profile or of a --policy JSON file. Settings at their defaults are printed
commented out. Printing, loading what was printed and printing again gives
the same text. The operator API's token is never printed.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return printConfig(cmd, args)
		},
	})
	return cfg
}

// printConfig prints the profile in effect for a weft crawl or weft serve
// command line.
func printConfig(cmd *cobra.Command, args []string) error {
	target, c := "crawl", newCrawlCmd()
	if len(args) > 0 && (args[0] == "crawl" || args[0] == "serve") {
		if args[0] == "serve" {
			target, c = "serve", newServeCmd()
		}
		args = args[1:]
	}
	fs := c.Flags()
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); errors.Is(err, pflag.ErrHelp) {
		return cmd.Help()
	} else if err != nil {
		return usageError{err}
	}
	seeds := fs.Args()
	// The policies in effect are printed as tables, whether they come
	// from the profile or from --policy's file, which --policy would
	// name again.
	skip := []string{"config", "policy"}
	var prof *profile.Profile
	if file, _ := fs.GetString("config"); file != "" {
		p, err := profile.Load(file)
		if err != nil {
			return usagef("--config: %v", err)
		}
		if err := p.Apply(fs, "config"); err != nil {
			return usageError{err}
		}
		prof = p
		if len(seeds) == 0 {
			seeds = p.URLs
		}
	}
	delay, _ := fs.GetDuration("delay")
	maxURLs, _ := fs.GetInt64("max-urls-per-host")
	lim := policy.Limits{Delay: delay, MaxURLs: maxURLs}
	policyFile, _ := fs.GetString("policy")
	var set *policy.Set
	var err error
	switch {
	case prof.HasPolicies() && policyFile != "":
		return prof.Locate(usagef("--policy %s and the [policies] tables of %s: give per-host policies in one place", policyFile, prof.File))
	case prof.HasPolicies():
		if set, err = prof.PolicySet(lim); err != nil {
			return usageError{err}
		}
	case policyFile != "":
		// The file's policies are printed as tables, in its place.
		if set, err = policy.Load(policyFile, lim); err != nil {
			return usagef("--policy: %v", err)
		}
	}
	return profile.Print(cmd.OutOrStdout(), target, fs, skip, seeds, set.All())
}
