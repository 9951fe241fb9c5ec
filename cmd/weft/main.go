// Command weft is a polite, crash-safe web crawler.
//
//	weft crawl [flags] [SEED...]   crawl from seeds until nothing is left
//	weft demo                      crawl a generated local web and show what happened
//	weft bench                     measure pages/s and CPU per page on the local web
//	weft docs flags                print the flag reference (docs/flags.md)
//
// main owns the process: it turns SIGINT/SIGTERM into a cancelled context
// (the crawl stops cleanly; a second signal exits at once with 130), and maps
// outcomes to exit codes: 0 done (drained, page cap or stopped by a signal),
// 1 failed, 2 bad usage or input.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/weft-crawler/weft/internal/version"
)

// usageError marks errors in what the user typed or gave (flags, seed
// files): exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal cancels ctx, a second one kills the process:
		// an operator who presses Ctrl-C twice means it.
		<-ctx.Done()
		cancel()
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		fmt.Fprintln(os.Stderr, "weft: second signal, exiting now")
		os.Exit(130)
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "weft:", err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "weft",
		Short:         "A polite, crash-safe web crawler",
		Version:       version.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.Args = cobra.ArbitraryArgs
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("unknown command %q (try weft --help)", args[0])
		}
		return cmd.Help()
	}
	bench := newBenchCmd()
	bench.AddCommand(newBenchQueueCmd(), newBenchHostsCmd(), newBenchRenderCmd(), newBenchOrderCmd())
	root.AddCommand(newCrawlCmd(), newServeCmd(), newConfigCmd(), newDemoCmd(), newCDXCmd(), newGetCmd(), newWACZCmd(), bench, newDocsCmd(), newSynthwebCmd(), newSynthHostsCmd(), newBenchQueuePhaseCmd())
	return root
}
