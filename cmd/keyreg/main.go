// Command keyreg treats the keys of a shared Redis as a public API declared
// in keys.yaml: it lints the registry, explains keys, and audits live Redis.
//
// Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage or
// configuration error (including an invalid keys.yaml), 3 runtime error such
// as Redis being unreachable.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/keyreg/keyreg/diag"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

// Exit codes, the same for every command.
const (
	exitClean    = 0
	exitFindings = 1
	exitUsage    = 2
	exitRuntime  = 3
)

func main() {
	vetTool()
	quietRedisLog()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// quietRedisLog silences go-redis, which logs failed dials and pool
// events to stderr with the standard logger: keyreg reports every error
// itself, in its own words and with passwords redacted. The logger is
// process-wide, so the process owner replaces it, once, before any
// connection: main, and TestMain for the tests' processes.
func quietRedisLog() { redis.SetLogger(quietRedis{}) }

// quietRedis discards go-redis' internal log lines.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

// app carries what every command needs.
type app struct {
	stdin          io.Reader // for --rdb -
	stdout, stderr io.Writer
	// audited, when set, is called with the total of keys audited after
	// every batch, on the audit's goroutine, which it blocks while it runs:
	// tests inject faults there (after N keys), never from a timer.
	audited func(total int64)
	// color is --color: auto, always or never.
	color string
}

// exitError carries an exit code. A nil err means the command already
// printed what there was to say.
type exitError struct {
	code int
	err  error
	hint string
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func usageError(err error, hint string) error { return &exitError{exitUsage, err, hint} }
func runtimeError(err error, hint string) error {
	return &exitError{exitRuntime, err, hint}
}

// errFindings ends a command that printed findings at or above --fail-on.
var errFindings = &exitError{code: exitFindings}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return (&app{stdin: os.Stdin, stdout: stdout, stderr: stderr}).run(ctx, args)
}

// run runs one command line and returns its exit code.
func (a *app) run(ctx context.Context, args []string) int {
	stdout, stderr := a.stdout, a.stderr
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitClean
	}
	var ee *exitError
	if !errors.As(err, &ee) {
		// Cobra's own errors: unknown commands, flags and arguments.
		ee = &exitError{code: exitUsage, err: err, hint: "run keyreg --help for usage"}
	}
	var le *diag.ListError
	if errors.As(ee.err, &le) {
		for _, d := range le.List {
			fmt.Fprintln(stderr, d)
		}
		return ee.code
	}
	if ee.err != nil {
		fmt.Fprintf(stderr, "keyreg: error: %v\n", ee.err)
		if ee.hint != "" {
			fmt.Fprintf(stderr, "hint: %s\n", ee.hint)
		}
	}
	return ee.code
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "keyreg",
		Short: "Keys of a shared Redis as a public API, declared in keys.yaml",
		Long: `keyreg declares every key family of a shared Redis in keys.yaml (owner, TTL
policy, type, encoding, payload schema) and checks code and servers against it.

Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage or config
error (including an invalid keys.yaml), 3 runtime error.`,
		Version:       toolVersion(),
		SilenceErrors: true,
		SilenceUsage:  true,
		// Every command with --registry finds keys.yaml upward when not given.
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			if err := checkColor(a.color); err != nil {
				return err
			}
			return a.findRegistry(c)
		},
	}
	root.PersistentFlags().StringVar(&a.color, "color", "auto", "colour the table format: auto (on a terminal, unless $NO_COLOR is set or $TERM is dumb), always or never")
	_ = root.RegisterFlagCompletionFunc("color", cobra.FixedCompletions([]string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp))
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError(err, fmt.Sprintf("run %s --help for usage", c.CommandPath()))
	})
	root.AddCommand(a.lintCmd(), a.explainCmd(), a.rulesCmd(), a.auditCmd(), a.genCmd(), a.demoCmd(), a.breakingCmd(), a.presetsCmd(), a.docsCmd(), a.initCmd(), a.suggestCmd(), a.reportCmd(), a.versionCmd(), a.serveCmd(), a.pruneCmd(), a.expireCmd(), a.restoreCmd(), a.vetCmd())
	return root
}

// args wraps a cobra positional-argument check so that its error is a usage
// error.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return usageError(err, fmt.Sprintf("run %s --help for usage", c.CommandPath()))
		}
		return nil
	}
}
