package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/keyreg/keyreg/report"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// formatFlag defines --format (-f) on c for a command that renders documents
// of kind d. The format names in its usage and its shell completions come
// from report's table of formats, like the validation (report.ParseFormat
// with report.Formats(d)), so a new format needs no change here.
func formatFlag(c *cobra.Command, p *string, value string, d report.Document, usage string) {
	c.Flags().StringVarP(p, "format", "f", value, usage)
	// The flag was just defined, so registering cannot fail.
	_ = c.RegisterFlagCompletionFunc("format", func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		return completeFormats(d, prefix, ""), cobra.ShellCompDirectiveNoFileComp
	})
}

// completeFormats returns the formats for d starting with prefix, as
// completions "name<suffix>\tdescription".
func completeFormats(d report.Document, prefix, suffix string) []string {
	var out []string
	for _, s := range report.FormatCompletions(d) {
		name, help, _ := strings.Cut(s, "\t")
		if strings.HasPrefix(name, strings.ToLower(prefix)) {
			out = append(out, name+suffix+"\t"+help)
		}
	}
	return out
}

// outputOptions are the --format and --output flags of a command that
// renders one document (lint, breaking, audit): --format is the one-output
// shorthand for standard output, --output FORMAT=PATH (repeatable) writes
// the same document in more formats from one run.
type outputOptions struct {
	doc     report.Document
	format  string
	outputs []string
	flags   *pflag.FlagSet // to tell a --format given from its default
}

// outputFlags defines --format (-f) and --output on c.
func outputFlags(c *cobra.Command, o *outputOptions, value string, d report.Document, usage string) {
	o.doc, o.flags = d, c.Flags()
	formatFlag(c, &o.format, value, d, usage)
	c.Flags().StringArrayVar(&o.outputs, "output", nil, "write the report as FORMAT=PATH (repeatable: one run, many formats; - is standard output; a file is replaced atomically)")
	_ = c.RegisterFlagCompletionFunc("output", func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		name, path, ok := strings.Cut(prefix, "=")
		if !ok {
			return completeFormats(d, prefix, "="), cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
		}
		return completePaths(name+"=", path), cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
	})
}

// maxCompletions bounds the entries a completion lists from a directory.
const maxCompletions = 1000

// completePaths lists the files and directories starting with path, each
// after lead; a directory ends in a slash, so completion goes on inside it.
func completePaths(lead, path string) []string {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(nonEmptyDir(dir))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), base) || (strings.HasPrefix(e.Name(), ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		s := lead + dir + e.Name()
		if e.IsDir() {
			s += string(filepath.Separator)
		}
		if out = append(out, s); len(out) == maxCompletions {
			break
		}
	}
	return out
}

func nonEmptyDir(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

// maxOutputs bounds the --output flags of one run: each renders the whole
// document again.
const maxOutputs = 32

// output is one destination of a command's document.
type output struct {
	format report.Format
	path   string   // "-" is standard output
	target string   // path, its symbolic links resolved: the file replaced
	tmp    *os.File // beside target, created before the run, renamed over it once written
}

// outputs are the destinations of one run, in the order given.
type outputs []*output

// open parses --format and --output. With no --output, --format (or
// def, when --format has no default of its own) goes to standard output; a
// --format given as well adds standard output to the --output list. Each
// file output gets its temporary file now, so that a path that cannot be
// written (no such directory, a directory, no permission) fails before the
// run, as a usage error (exit 2). The caller defers discard.
func (o *outputOptions) open(def func() report.Format) (outputs, error) {
	if len(o.outputs) > maxOutputs {
		return nil, usageError(fmt.Errorf("%d --output flags, over the limit of %d", len(o.outputs), maxOutputs), "")
	}
	var outs outputs
	if len(o.outputs) == 0 || (o.flags != nil && o.flags.Changed("format")) {
		var f report.Format
		if o.format == "" && def != nil {
			f = def()
		} else {
			var err error
			if f, err = report.ParseFormat(o.format, report.Formats(o.doc)...); err != nil {
				return nil, usageError(err, "")
			}
		}
		outs = append(outs, &output{format: f, path: "-"})
	}
	seen := map[string]bool{}
	for _, spec := range o.outputs {
		name, path, ok := strings.Cut(spec, "=")
		if !ok || strings.TrimSpace(name) == "" || path == "" {
			return nil, usageError(fmt.Errorf("bad --output %q: want FORMAT=PATH", spec), "such as --output json=report.json, or --output text=- for standard output")
		}
		f, err := report.ParseFormat(name, report.Formats(o.doc)...)
		if err != nil {
			return nil, usageError(fmt.Errorf("bad --output %q: %w", spec, err), "")
		}
		outs = append(outs, &output{format: f, path: path})
	}
	var files []fs.FileInfo // of the outputs whose file exists
	for _, out := range outs {
		key := resolvedPath(out.path)
		var st fs.FileInfo
		if key != "-" {
			st, _ = os.Stat(out.path)
		}
		same := seen[key]
		for _, f := range files {
			same = same || (st != nil && os.SameFile(f, st))
		}
		if same {
			where := "standard output"
			if key != "-" {
				where = fmt.Sprintf("%q", out.path)
			}
			return nil, usageError(fmt.Errorf("two outputs write to %s (the same file, through a link or another name)", where), "give each --output its own path")
		}
		seen[key] = true
		if st != nil {
			files = append(files, st)
		}
	}
	for _, out := range outs {
		if err := out.create(); err != nil {
			outs.discard()
			return nil, usageError(err, "the directory must exist and be writable; reports are written to a temporary file there, then renamed")
		}
	}
	return outs, nil
}

// resolvedPath is the file path names once its links are resolved: the
// file itself when it exists, else its directory, resolved, and its name;
// "-" stays "-". Two outputs with one resolved path write one file.
func resolvedPath(path string) string {
	if path == "-" {
		return path
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	dir, base := filepath.Split(abs)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return filepath.Join(real, base)
	}
	return abs
}

// create makes the temporary file of a file output.
func (out *output) create() error {
	if out.path == "-" {
		return nil
	}
	if st, err := os.Stat(out.path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("cannot write --output %s=%s: not a regular file", out.format, out.path)
	}
	// A symbolic link is followed: the file it points at is replaced, and
	// the link stays.
	out.target = out.path
	if real, err := filepath.EvalSymlinks(out.path); err == nil {
		out.target = real
	}
	dir, base := filepath.Split(out.target)
	removeStaleTemps(nonEmptyDir(dir), base)
	tmp, err := os.CreateTemp(nonEmptyDir(dir), tempPrefix(base)+"*"+tempSuffix)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot write --output %s=%s: %w", out.format, out.path, err)
	}
	// Held locked while the run lives: the lock goes with the process,
	// however it ends, so that a later run can tell a temporary file left by
	// a killed run from one still being written.
	lockFile(tmp)
	out.tmp = tmp
	return nil
}

// The temporary sibling of an output file base is named
// "."+base+".keyreg-RANDOM.tmp".
const tempSuffix = ".tmp"

func tempPrefix(base string) string { return "." + base + ".keyreg-" }

// staleAge is how old a temporary file must be before it may be removed as
// stale: one just created may not be locked yet.
const staleAge = time.Minute

// maxStaleScan bounds the directory entries removeStaleTemps looks at.
const maxStaleScan = 10000

// removeStaleTemps removes the temporary siblings of base in dir that a
// run killed before it could remove them left (kill -9, a crash, a power
// cut): files of our own naming, older than staleAge, that no process
// holds locked. A file that another run is still writing is locked, and
// kept. Failures are ignored: a stale file left is only clutter.
func removeStaleTemps(dir, base string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	defer d.Close()
	names, _ := d.Readdirnames(maxStaleScan)
	prefix := tempPrefix(base)
	for _, name := range names {
		if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, tempSuffix) || len(name) <= len(prefix)+len(tempSuffix) {
			continue
		}
		p := filepath.Join(dir, name)
		st, err := os.Lstat(p)
		if err != nil || !st.Mode().IsRegular() || time.Since(st.ModTime()) < staleAge {
			continue
		}
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if tryLock(f) {
			os.Remove(p)
		}
		f.Close()
	}
}

// discard removes the temporary files not renamed yet.
func (outs outputs) discard() {
	for _, out := range outs {
		if out.tmp != nil {
			out.tmp.Close()
			os.Remove(out.tmp.Name())
			out.tmp = nil
		}
	}
}

// partialNote says where the partial document (what, such as "report")
// went, for the error that ends the run: "the report above is partial"
// only when standard output got one, else the files, such as "the report
// in audit.json is partial".
func (outs outputs) partialNote(what string) string {
	var files []string
	above := false
	for _, out := range outs {
		if out.path == "-" {
			above = true
		} else if !slices.Contains(files, out.path) {
			files = append(files, out.path)
		}
	}
	where := ""
	switch {
	case len(files) > 3:
		where = fmt.Sprintf("%s, %s and %d more files", files[0], files[1], len(files)-2)
	case len(files) > 1:
		where = strings.Join(files[:len(files)-1], ", ") + " and " + files[len(files)-1]
	case len(files) == 1:
		where = files[0]
	}
	switch {
	case above && where != "":
		return "the " + what + " above and in " + where + " is partial"
	case above:
		return "the " + what + " above is partial"
	case where != "":
		return "the " + what + " in " + where + " is partial"
	}
	return "the " + what + " is partial"
}

// has reports whether any output is in format f.
func (outs outputs) has(f report.Format) bool {
	for _, out := range outs {
		if out.format == f {
			return true
		}
	}
	return false
}

// write renders the document once per output, each render to its own
// destination: standard output, or the temporary file, which is then
// synced and renamed over the path, so a reader sees the old report or the
// new one, never half of one. first is set for the first output of each
// format, which alone writes the side outputs (the text summary, the
// GitHub step summary). Every output is attempted; the errors are joined.
func (outs outputs) write(stdout io.Writer, render func(w io.Writer, f report.Format, first bool) error) error {
	var errs []error
	done := map[report.Format]bool{}
	for _, out := range outs {
		first := !done[out.format]
		done[out.format] = true
		if out.path == "-" {
			if err := render(stdout, out.format, first); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if err := out.commit(render(out.tmp, out.format, first)); err != nil {
			errs = append(errs, fmt.Errorf("--output %s=%s: %w", out.format, out.path, err))
		}
	}
	return errors.Join(errs...)
}

// commit finishes a file output: after a render error (err) the
// temporary file is removed and the path left alone.
func (out *output) commit(err error) error {
	tmp := out.tmp
	out.tmp = nil
	if err == nil {
		mode := fs.FileMode(0o644)
		if st, serr := os.Stat(out.target); serr == nil {
			mode = st.Mode().Perm()
		}
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), out.target)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
