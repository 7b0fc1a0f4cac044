package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"
)

// defaultWidth is the width the table format fits when neither $COLUMNS
// nor the terminal says another.
const defaultWidth = 80

// terminalWidth is the width the table format fits on w: $COLUMNS when it
// holds a positive number, else the size of w's terminal, else 80.
func terminalWidth(w io.Writer) int {
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if n, _, err := term.GetSize(int(f.Fd())); err == nil && n > 0 {
			return n
		}
	}
	return defaultWidth
}

// useColor reports whether the table format may colour its output on w:
// with --color auto (the default), when w is a terminal, $NO_COLOR is unset
// or empty (no-color.org) and $TERM is not dumb; always or never whatever
// w is.
func (a *app) useColor(w io.Writer) bool {
	switch a.color {
	case "always":
		return true
	case "never":
		return false
	}
	return isTerminal(w) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}

// checkColor validates a --color value.
func checkColor(s string) error {
	switch s {
	case "auto", "always", "never":
		return nil
	}
	return usageError(fmt.Errorf("bad --color %q (want auto, always or never)", s), "")
}
