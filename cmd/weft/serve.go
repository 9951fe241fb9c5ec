package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-crawler/weft/internal/bytesize"
	"github.com/weft-crawler/weft/internal/recrawl"
)

type serveFlags struct {
	crawlFlags
	min, max, scan, prior, floor time.Duration
	inlink                       int64 // --inlink-memory's bytes; -1: off
}

// mibValue is --inlink-mib, which --inlink-memory replaced: a number of
// MiB (or -1), kept for one release, written into --inlink-memory's
// bytes, so that either flag sets the one value (and a profile printed
// says it as --inlink-memory).
type mibValue int64

func (v *mibValue) String() string { return strconv.FormatInt(int64(*v)>>20, 10) }
func (v *mibValue) Type() string   { return "int" }
func (v *mibValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil || n < -1 || n > 1<<40:
		return fmt.Errorf("want a number of MiB, or -1 (use --inlink-memory, which takes a size such as 64MiB)")
	case n == -1:
		*v = -1
	default:
		*v = mibValue(n << 20)
	}
	return nil
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [flags] [SEED...]",
		Short: "Crawl continuously: fetch pages again when their learnt change rate says they are due",
		Long: `Crawl as weft crawl does, but never finish: every fetched page gets a next
crawl time from how often it was seen to change (clamped to --recrawl-min and
--recrawl-max, spread per URL), is queued again when that time comes, most
valuable first, through the same per-host queues and clocks, and is asked for
with the ETag and Last-Modified of its last 200. A 304 Not Modified is
archived as a server-not-modified revisit and not parsed again. Ctrl-C or
SIGTERM stops as weft crawl does; running it again on --data resumes.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := f.loadProfile(cmd.Flags(), args)
			if err != nil {
				return err
			}
			cfg, err := f.config(args, cmd.ErrOrStderr())
			if err != nil {
				return f.profile.Locate(err)
			}
			if f.min <= 0 || f.max < f.min || f.scan <= 0 || f.prior <= 0 || f.floor < 0 {
				return f.profile.Locate(usagef("--recrawl-min, --recrawl-scan and --recrawl-prior must be positive, --recrawl-max at least --recrawl-min, and --recrawl-floor not negative"))
			}
			cfg.Recrawl = &recrawl.Policy{Min: f.min, Max: f.max, Prior: 1 / f.prior.Seconds(), Floor: f.floor.Seconds()}
			cfg.InLinkBytes = int(f.inlink) // 0: sized by --expected-urls; -1: off
			if !cmd.Flags().Changed("give-up-after") {
				// A crawl that never ends would in time give up every
				// host whose pages fail now and then.
				cfg.Politeness.GiveUpAfter = -1
			}
			if !cmd.Flags().Changed("max-crawl-delay") {
				// A crawl that never ends refuses no host for its
				// Crawl-delay: one that asks for ten minutes still gives
				// it 144 pages a day.
				cfg.MaxCrawlDelay = -1
			}
			cfg.RecrawlScan = f.scan
			return f.run(cmd, cfg)
		},
	}
	f.register(cmd.Flags())
	fl := cmd.Flags()
	fl.DurationVar(&f.min, "recrawl-min", 10*time.Minute, "least time between two fetches of one URL")
	fl.DurationVar(&f.max, "recrawl-max", 90*24*time.Hour, "most time between two fetches of one URL")
	fl.DurationVar(&f.scan, "recrawl-scan", 10*time.Second, "how often URLs due again are looked for")
	fl.DurationVar(&f.prior, "recrawl-prior", 24*time.Hour, "change interval assumed for the pages of a host until its pages' visits (pooled per host) say otherwise")
	fl.DurationVar(&f.floor, "recrawl-floor", 0, "freshness a visit must promise (importance-weighted) for a URL to be due, however idle the crawl; 0 means a tenth of --recrawl-min")
	fl.Var(bytesize.NewValueOrMinusOne(&f.inlink, 0), "inlink-memory", "memory that counts each URL's in-links, which weigh in its importance; 0 means at least 4 bytes per --expected-urls (and 4MiB), -1 turns counting off")
	fl.Var((*mibValue)(&f.inlink), "inlink-mib", "")
	fl.MarkDeprecated("inlink-mib", "use --inlink-memory, which takes a size (64MiB)")
	return cmd
}
