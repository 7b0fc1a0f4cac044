package registry

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseDuration parses Go duration syntax extended with d (24h) and w (7d),
// such as "30m", "7d" or "1w2d12h". Negative and zero durations are errors.
func ParseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	var total time.Duration
	rest := s
	for rest != "" {
		i := 0
		for i < len(rest) && (isDigit(rest[i]) || rest[i] == '.') {
			i++
		}
		j := i
		for j < len(rest) && !isDigit(rest[j]) && rest[j] != '.' {
			j++
		}
		num, unit := rest[:i], rest[i:j]
		rest = rest[j:]
		if num == "" || unit == "" {
			return 0, fmt.Errorf("bad duration %q (want Go syntax with d and w, such as 30m, 24h or 7d)", s)
		}
		var d time.Duration
		switch unit {
		case "d", "w":
			f, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, fmt.Errorf("bad duration %q (want Go syntax with d and w, such as 30m, 24h or 7d)", s)
			}
			day := 24 * time.Hour
			if unit == "w" {
				day *= 7
			}
			if f > float64(1<<62)/float64(day) {
				return 0, fmt.Errorf("duration %q is too long", s)
			}
			d = time.Duration(f * float64(day))
		default:
			var err error
			d, err = time.ParseDuration(num + unit)
			if err != nil {
				return 0, fmt.Errorf("bad duration %q (want Go syntax with d and w, such as 30m, 24h or 7d)", s)
			}
		}
		if total > (1<<62) || d > (1<<62) {
			return 0, fmt.Errorf("duration %q is too long", s)
		}
		total += d
	}
	if total <= 0 {
		return 0, fmt.Errorf("duration %q must be positive", s)
	}
	return total, nil
}

// FormatDuration prints d compactly, as a person writes it in keys.yaml:
// whole weeks as "2w", whole days of two or more as "30d", other spans over
// two days in days and hours, truncated ("456d4h"), anything else in hours,
// minutes and seconds ("24h", "36h", "1h30m", "1m30s").
func FormatDuration(d time.Duration) string {
	const day, week = 24 * time.Hour, 7 * 24 * time.Hour
	switch {
	case d <= 0:
		return d.String()
	case d%week == 0:
		return fmt.Sprintf("%dw", d/week)
	case d%day == 0 && d >= 2*day:
		return fmt.Sprintf("%dd", d/day)
	case d > 2*day:
		// Long, uneven spans (idle times, TTLs seen live) read best in
		// days and hours; minutes no longer matter at that scale.
		return fmt.Sprintf("%dd%dh", d/day, d%day/time.Hour)
	}
	var b strings.Builder
	for _, u := range []struct {
		name string
		d    time.Duration
	}{{"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}} {
		if n := d / u.d; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.d
		}
	}
	if d > 0 {
		b.WriteString(d.String())
	}
	return b.String()
}
