package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"tix/internal/catalogimport"
	"tix/internal/clock"
	"tix/internal/store"
	"tix/internal/ticketing"
)

// Defaults: the local stack.
const (
	defaultTable    = "tix"
	defaultRegion   = "us-east-1"
	defaultEndpoint = "http://127.0.0.1:8000"
)

// command is one entry of the dispatch table.
type command struct {
	name    string // "group verb"
	args    string // synopsis of its flags and arguments
	summary string
	run     func(ctx context.Context, a *app, args []string) error
}

// app carries the global options and the outputs of one invocation.
type app struct {
	json                    bool
	table, region, endpoint string
	stdout, stderr          io.Writer
	stdin                   io.Reader
	clock                   clock.Clock
	st                      *store.Store
	// parent is the context commands run under (Ctrl-C ends it); nil: Background.
	parent context.Context
}

func newApp(stdout, stderr io.Writer, stdin io.Reader) *app {
	return &app{stdout: stdout, stderr: stderr, stdin: stdin, clock: clock.System{}}
}

// usageError is a mistake in the command line: exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// errHelp asks for the usage text and exit code 0.
var errHelp = errors.New("help requested")

func (a *app) run(args []string) int {
	rest, err := a.globals(args)
	if err != nil {
		return a.fail(err)
	}
	if len(rest) == 0 || rest[0] == "help" || rest[0] == "-h" || rest[0] == "--help" {
		if len(rest) == 0 {
			return a.fail(usageError{"no command given\n\n" + usageText()})
		}
		fmt.Fprint(a.stdout, usageText())
		return 0
	}
	cmd, cmdArgs, err := lookup(rest)
	if err != nil {
		return a.fail(err)
	}
	parent := a.parent
	if parent == nil {
		parent = context.Background()
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt)
	defer stop()
	err = cmd.run(ctx, a, cmdArgs)
	if errors.Is(err, errHelp) {
		fmt.Fprintf(a.stdout, "usage: tixctl %s %s\n\n%s\n", cmd.name, cmd.args, cmd.summary)
		return 0
	}
	if err != nil {
		var u usageError
		if errors.As(err, &u) {
			err = usageError{fmt.Sprintf("%s\nusage: tixctl %s %s", u.msg, cmd.name, cmd.args)}
		}
		return a.fail(err)
	}
	return 0
}

// lookup finds the command named by the first word, or the first two.
func lookup(args []string) (command, []string, error) {
	for _, c := range commands {
		if c.name == args[0] { // a command of one word (listen)
			return c, args[1:], nil
		}
	}
	if len(args) >= 2 {
		for _, c := range commands {
			if c.name == args[0]+" "+args[1] {
				return c, args[2:], nil
			}
		}
	}
	var verbs []string
	for _, c := range commands {
		if group, verb, _ := strings.Cut(c.name, " "); group == args[0] {
			verbs = append(verbs, verb)
		}
	}
	if len(verbs) > 0 {
		return command{}, nil, usagef("%q needs one of: %s", args[0], strings.Join(verbs, ", "))
	}
	return command{}, nil, usagef("unknown command %q: tixctl help lists the commands", strings.Join(args[:min(2, len(args))], " "))
}

func usageText() string {
	var b strings.Builder
	b.WriteString("usage: tixctl [--json] [--table NAME] [--region REGION] [--endpoint URL|aws] COMMAND\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-28s %s\n", c.name, c.summary)
		if c.args != "" {
			fmt.Fprintf(&b, "  %-28s   %s\n", "", c.args)
		}
	}
	b.WriteString("\nDefaults: table tix, region us-east-1, endpoint http://127.0.0.1:8000 (DynamoDB Local);\n" +
		"env TIX_TABLE, AWS_REGION, TIX_DYNAMODB_ENDPOINT. --endpoint \"\" or aws means real AWS.\n" +
		"Global flags may come before or after the command.\n")
	return b.String()
}

// globals takes the global flags out of args, wherever they are (before "--"),
// and resolves the connection settings against the environment.
func (a *app) globals(args []string) ([]string, error) {
	var rest []string
	var table, region, endpoint *string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if !strings.HasPrefix(arg, "-") {
			rest = append(rest, arg)
			continue
		}
		switch name {
		case "json":
			a.json = true
			if hasValue {
				switch value {
				case "true", "1":
				case "false", "0":
					a.json = false
				default:
					return nil, usagef("--json takes no value (or true/false), got %q", value)
				}
			}
			continue
		case "table", "region", "endpoint":
			if !hasValue {
				if i+1 >= len(args) {
					return nil, usagef("--%s needs a value", name)
				}
				i++
				value = args[i]
			}
			v := value
			switch name {
			case "table":
				table = &v
			case "region":
				region = &v
			case "endpoint":
				endpoint = &v
			}
			continue
		}
		rest = append(rest, arg)
	}
	a.table = pick(table, os.Getenv("TIX_TABLE"), defaultTable)
	a.region = pick(region, os.Getenv("AWS_REGION"), defaultRegion)
	a.endpoint = pick(endpoint, os.Getenv("TIX_DYNAMODB_ENDPOINT"), defaultEndpoint)
	if a.endpoint == "aws" {
		a.endpoint = ""
	}
	if a.table == "" {
		return nil, usagef("--table must not be empty")
	}
	return rest, nil
}

// pick: the flag if given (even empty), else the environment if set, else the default.
func pick(flagValue *string, env, def string) string {
	if flagValue != nil {
		return *flagValue
	}
	if env != "" {
		return env
	}
	return def
}

// store opens the store on first use.
func (a *app) store(ctx context.Context) (*store.Store, error) {
	if a.st != nil {
		return a.st, nil
	}
	st, err := store.Open(ctx, store.Options{Table: a.table, Region: a.region, Endpoint: a.endpoint, Clock: a.clock})
	if err != nil {
		return nil, err
	}
	a.st = st
	return st, nil
}

func (a *app) where() string {
	if a.endpoint == "" {
		return "AWS (" + a.region + ")"
	}
	return a.endpoint
}

// emit prints a command's result: v as one JSON value with --json, else human.
func (a *app) emit(v any, human func(w io.Writer)) error {
	if a.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	}
	human(a.stdout)
	return nil
}

// errorBody is the --json error: {"error": {...}} on stdout.
type errorBody struct {
	Message  string                      `json:"message"`
	Code     string                      `json:"code,omitempty"`
	Param    string                      `json:"param,omitempty"`
	Problems []catalogimport.ImportError `json:"problems,omitempty"`
}

// fail reports err and returns the exit code.
func (a *app) fail(err error) int {
	code := 1
	body := errorBody{Message: err.Error()}
	var u usageError
	var te *ticketing.Error
	switch {
	case errors.As(err, &u):
		code, body.Code = 2, "usage"
	case errors.As(err, &te):
		body.Message, body.Code, body.Param = te.Message, string(te.Code), te.Param
		body.Problems = catalogimport.ImportProblems(err)
	}
	if a.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		_ = enc.Encode(map[string]errorBody{"error": body})
		return code
	}
	fmt.Fprintf(a.stderr, "tixctl: %s\n", body.Message)
	return code
}

// parseFlags parses flags and positional arguments in any order.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// listFlag collects a repeatable flag, each value possibly a comma list.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

func required(name, value string) error {
	if strings.TrimSpace(value) == "" {
		return usagef("--%s is required", name)
	}
	return nil
}

// parseNamed parses a command that takes flags only: no positional argument,
// and each flag in requiredFlags given a non-blank value.
func parseNamed(fs *flag.FlagSet, args []string, requiredFlags ...string) error {
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := noPositional(rest); err != nil {
		return err
	}
	for _, name := range requiredFlags {
		if err := required(name, fs.Lookup(name).Value.String()); err != nil {
			return err
		}
	}
	return nil
}

func noPositional(args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	return nil
}

func formatTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// table prints aligned columns.
func table(w io.Writer, header []string, rows [][]string) {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = len(h)
	}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		for i, c := range cells {
			if i == len(cells)-1 {
				b.WriteString(c)
			} else {
				fmt.Fprintf(&b, "%-*s  ", widths[i], c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(header)
	for _, r := range rows {
		line(r)
	}
}
