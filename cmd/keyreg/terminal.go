package main

import (
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

// useColor reports whether the table format may colour its output on w: w
// is a terminal, $NO_COLOR is unset or empty (no-color.org) and $TERM is
// not dumb.
func useColor(w io.Writer) bool {
	return isTerminal(w) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}
