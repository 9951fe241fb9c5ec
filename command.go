package weft

import "github.com/weft-crawler/weft/internal/command"

// CommandConfig describes a program that reads pages for a crawl through
// the command protocol: JSON lines on its standard input and output
// (docs/extensions.md). Argv is the program and its arguments, run
// directly (no shell); MediaTypes what it reads ("text/html", "text/*",
// "*/*"); Timeout bounds each answer (zero: 10 seconds; a program that
// does not answer in time is killed and started again); MaxMemory caps
// each copy's address space in bytes (Linux; zero: 1 GiB, negative no
// cap); Procs is how many copies run at once (zero: 1); Logger receives
// the program's standard error (nil discards it).
type CommandConfig = command.Config

// Command is a Handler run by another program, counted under its Name
// (the program's base name). Close it after Run.
type Command = command.Handler

// NewCommand checks cfg and finds the program; nothing starts before the
// first page.
func NewCommand(cfg CommandConfig) (*Command, error) { return command.New(cfg) }
