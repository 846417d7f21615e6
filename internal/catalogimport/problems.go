package catalogimport

import (
	"errors"
	"fmt"
	"strings"

	"tix/internal/ticketing"
)

// ImportError is one problem of an import file, named by the path of its field
// (events[2].tiers[0].price). Line and Column are set for problems found while
// reading the JSON itself.
type ImportError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
}

func (e ImportError) String() string {
	s := e.Message
	if e.Path != "" {
		s = e.Path + ": " + s
	}
	if e.Line > 0 {
		s += fmt.Sprintf(" (line %d, column %d)", e.Line, e.Column)
	}
	return s
}

// ImportErrors lists every problem found in an import; nothing is written while
// there is one.
type ImportErrors []ImportError

func (l ImportErrors) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.String()
	}
	return strings.Join(lines, "\n")
}

// Err returns nil for an empty list, else an invalid_request *ticketing.Error whose
// message lists every problem; ImportProblems recovers the list from it.
func (l ImportErrors) Err() error {
	if len(l) == 0 {
		return nil
	}
	noun := "problems"
	if len(l) == 1 {
		noun = "problem"
	}
	return &ticketing.Error{
		Code:    ticketing.CodeInvalidRequest,
		Message: fmt.Sprintf("the catalog has %d %s:\n%s", len(l), noun, indent(l.Error())),
		Param:   l[0].Path,
		Err:     importProblems{l},
	}
}

// importProblems carries the list inside a *ticketing.Error without repeating it in Error().
type importProblems struct{ list ImportErrors }

func (p importProblems) Error() string { return fmt.Sprintf("%d problem(s)", len(p.list)) }
func (p importProblems) Unwrap() error { return p.list }

// ImportProblems returns the problems carried by err, or nil.
func ImportProblems(err error) ImportErrors {
	var l ImportErrors
	if errors.As(err, &l) {
		return l
	}
	return nil
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }
