// Package gitfs reads the tree of a git commit as an [fs.FS], so that
// `keyreg breaking --against main` loads the old keys.yaml the same way it
// loads the working tree: through [registry.Load].
//
// It runs the git binary (git ls-tree, git cat-file) in an existing
// repository. It never clones, checks out or touches the working tree or the
// index, and it never fetches: a ref that the repository does not have is an
// error that says so, with [ErrShallow] when the repository is a shallow clone
// (the usual cause in CI, fixed by fetching full history, such as
// `fetch-depth: 0` in actions/checkout).
//
// Paths in the file system are relative to the repository root, with forward
// slashes; [Locate] maps a file of the working tree to such a path.
//
// [registry.Load]: https://pkg.go.dev/github.com/keyreg/keyreg/registry#Load
package gitfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Errors that Open and MergeBase wrap, to be tested with errors.Is.
var (
	// ErrRefNotFound means the ref does not name a commit of the repository.
	ErrRefNotFound = errors.New("git ref not found")
	// ErrShallow means the ref or merge base is missing from a shallow
	// clone: fetching more history (fetch-depth: 0) may fix it. Errors
	// that wrap it wrap ErrRefNotFound too.
	ErrShallow = errors.New("shallow clone")
	// ErrNotRepository means the directory is not inside a git work tree.
	ErrNotRepository = errors.New("not a git repository")
)

// RefError reports a ref or merge base that the repository cannot resolve.
type RefError struct {
	Ref     string // the ref as given, or "a...b" for a merge base
	Shallow bool   // the repository is a shallow clone
	Detail  string // what git said, one line; may be empty
}

// Error returns a message such as `git ref "main" not found in this shallow clone`.
func (e *RefError) Error() string {
	msg := fmt.Sprintf("git ref %q not found", e.Ref)
	if strings.Contains(e.Ref, "...") {
		msg = fmt.Sprintf("no merge base of %s", strings.ReplaceAll(e.Ref, "...", " and "))
	}
	if e.Shallow {
		msg += " in this shallow clone"
	}
	return msg
}

// Is makes errors.Is match ErrRefNotFound, and ErrShallow for a shallow clone.
func (e *RefError) Is(target error) bool {
	return target == ErrRefNotFound || (e.Shallow && target == ErrShallow)
}

// run runs git in dir and returns its standard output. A failure carries
// git's standard error, trimmed to one line.
func run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--literal-pathspecs", "-c", "core.quotePath=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, fmt.Errorf("running git: %w", err)
		}
		msg := strings.Join(strings.Fields(stderr.String()), " ")
		if msg == "" {
			msg = err.Error()
		}
		return nil, &gitError{args: args, code: ee.ExitCode(), msg: msg}
	}
	return stdout.Bytes(), nil
}

type gitError struct {
	args []string
	code int
	msg  string
}

func (e *gitError) Error() string {
	return fmt.Sprintf("git %s: %s", e.args[0], e.msg)
}

// repo checks that dir is inside a git work tree (or a bare repository).
func repo(ctx context.Context, dir string) error {
	if _, err := run(ctx, dir, "rev-parse", "--git-dir"); err != nil {
		var ge *gitError
		if errors.As(err, &ge) && strings.Contains(ge.msg, "not a git repository") {
			return fmt.Errorf("%q: %w", dir, ErrNotRepository)
		}
		return err
	}
	return nil
}

func shallow(ctx context.Context, dir string) bool {
	out, err := run(ctx, dir, "rev-parse", "--is-shallow-repository")
	return err == nil && strings.TrimSpace(string(out)) == "true"
}

// resolve returns the commit ID that ref names.
func resolve(ctx context.Context, dir, ref string) (string, error) {
	if ref == "" || strings.HasPrefix(ref, "-") {
		return "", &RefError{Ref: ref, Detail: "a ref cannot be empty or start with '-'"}
	}
	out, err := run(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		var ge *gitError
		if !errors.As(err, &ge) {
			return "", err
		}
		return "", &RefError{Ref: ref, Shallow: shallow(ctx, dir), Detail: ge.msg}
	}
	return strings.TrimSpace(string(out)), nil
}

// MergeBase returns the commit ID of the best common ancestor of a and b,
// as `git merge-base a b` finds it. When either ref or the merge base is
// missing it returns a *RefError, marked Shallow when the repository is a
// shallow clone whose history may not reach the merge base.
func MergeBase(ctx context.Context, repoDir, a, b string) (string, error) {
	if err := repo(ctx, repoDir); err != nil {
		return "", err
	}
	ca, err := resolve(ctx, repoDir, a)
	if err != nil {
		return "", err
	}
	cb, err := resolve(ctx, repoDir, b)
	if err != nil {
		return "", err
	}
	out, err := run(ctx, repoDir, "merge-base", ca, cb)
	if err != nil {
		var ge *gitError
		if !errors.As(err, &ge) {
			return "", err
		}
		return "", &RefError{Ref: a + "..." + b, Shallow: shallow(ctx, repoDir), Detail: ge.msg}
	}
	return strings.TrimSpace(string(out)), nil
}

// Locate returns the directory to run git in for file (a path of the
// operating system) and file's path relative to the root of its
// repository, with forward slashes, such as "deploy/keys.yaml". The file
// itself need not exist, but its directory must.
func Locate(ctx context.Context, file string) (dir, name string, err error) {
	dir = filepath.Dir(file)
	if err := repo(ctx, dir); err != nil {
		return "", "", err
	}
	out, err := run(ctx, dir, "rev-parse", "--show-prefix")
	if err != nil {
		return "", "", err
	}
	prefix := strings.TrimSpace(string(out))
	return dir, path.Clean(prefix + filepath.Base(file)), nil
}

// Open returns the tree of the commit that ref names (a branch, tag,
// commit ID or any other revision git understands) in the repository
// containing repoDir. The ref is resolved once, so the file system is a
// stable snapshot even if the ref moves. Paths are relative to the
// repository root, whatever directory repoDir is.
//
// A ref that does not name a commit yields a *RefError (errors.Is
// ErrRefNotFound, and ErrShallow in a shallow clone).
func Open(ctx context.Context, repoDir, ref string) (fs.FS, error) {
	if err := repo(ctx, repoDir); err != nil {
		return nil, err
	}
	commit, err := resolve(ctx, repoDir, ref)
	if err != nil {
		return nil, err
	}
	return &FS{ctx: ctx, dir: repoDir, commit: commit, ref: ref}, nil
}

// FS is the tree of one commit. It implements fs.FS, fs.ReadFileFS,
// fs.ReadDirFS, fs.StatFS and fs.ReadLinkFS.
type FS struct {
	ctx    context.Context
	dir    string
	commit string
	ref    string
}

// Commit returns the commit ID the file system shows.
func (f *FS) Commit() string { return f.commit }

// entry is one line of git ls-tree -l: a tree entry.
type entry struct {
	mode   uint32 // git mode, such as 0o100644 or 0o40000
	typ    string // blob, tree or commit (a submodule)
	object string
	size   int64 // -1 for trees and submodules
	name   string
}

func (e entry) fileMode() fs.FileMode {
	switch {
	case e.typ == "tree" || e.typ == "commit":
		return fs.ModeDir | 0o555
	case e.mode == 0o120000:
		return fs.ModeSymlink | 0o777
	case e.mode&0o111 != 0:
		return 0o555
	}
	return 0o444
}

// lsTree lists tree-ish (a tree ID, or commit -- path for one entry).
func (f *FS) lsTree(args ...string) ([]entry, error) {
	out, err := run(f.ctx, f.dir, append([]string{"ls-tree", "-z", "-l", "--full-tree"}, args...)...)
	if err != nil {
		return nil, err
	}
	var es []entry
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, name, ok := bytes.Cut(rec, []byte{'\t'})
		fields := strings.Fields(string(meta))
		if !ok || len(fields) != 4 {
			return nil, fmt.Errorf("git ls-tree: unexpected output %q", rec)
		}
		mode, err := strconv.ParseUint(fields[0], 8, 32)
		if err != nil {
			return nil, fmt.Errorf("git ls-tree: bad mode %q", fields[0])
		}
		size := int64(-1)
		if fields[3] != "-" {
			if size, err = strconv.ParseInt(fields[3], 10, 64); err != nil {
				return nil, fmt.Errorf("git ls-tree: bad size %q", fields[3])
			}
		}
		es = append(es, entry{mode: uint32(mode), typ: fields[1], object: fields[2], size: size, name: path.Base(string(name))})
	}
	return es, nil
}

// stat finds the entry at name, a valid fs path other than ".".
func (f *FS) stat(op, name string) (entry, error) {
	es, err := f.lsTree(f.commit, "--", name)
	if err != nil {
		return entry{}, &fs.PathError{Op: op, Path: name, Err: err}
	}
	for _, e := range es {
		if e.name == path.Base(name) {
			return e, nil
		}
	}
	return entry{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
}

func (f *FS) root() entry {
	return entry{mode: 0o40000, typ: "tree", object: f.commit + "^{tree}", size: -1, name: "."}
}

// Open opens the file or directory at name.
func (f *FS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	e := f.root()
	if name != "." {
		var err error
		if e, err = f.stat("open", name); err != nil {
			return nil, err
		}
	}
	if e.typ != "blob" {
		return &dir{fsys: f, e: e, path: name}, nil
	}
	data, err := f.blob(e)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &file{info: info{e}, r: bytes.NewReader(data)}, nil
}

// MaxBlobSize is the largest file the file system reads. Larger blobs are
// an error, found from the tree's size column before the blob is read.
const MaxBlobSize = 64 << 20

func (f *FS) blob(e entry) ([]byte, error) {
	if e.size > MaxBlobSize {
		return nil, fmt.Errorf("file is %d bytes, larger than the %d-byte limit", e.size, MaxBlobSize)
	}
	return run(f.ctx, f.dir, "cat-file", "blob", e.object)
}

// ReadLink returns the target of the symbolic link at name, as git stores
// it. The file system never follows links itself: Open, ReadFile and Stat
// see a link as a small file holding its target, so a caller that follows
// links (as registry.Load does, inside the tree) uses ReadLink and Lstat.
func (f *FS) ReadLink(name string) (string, error) {
	if !fs.ValidPath(name) || name == "." {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	e, err := f.stat("readlink", name)
	if err != nil {
		return "", err
	}
	if e.mode != 0o120000 || e.size > 4096 {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: errors.New("not a symbolic link")}
	}
	data, err := f.blob(e)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	return string(data), nil
}

// Lstat returns the file info of name without following a link: the same
// as Stat, since the file system follows none.
func (f *FS) Lstat(name string) (fs.FileInfo, error) { return f.Stat(name) }

// ReadFile returns the content of the file at name.
func (f *FS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) || name == "." {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrInvalid}
	}
	e, err := f.stat("readfile", name)
	if err != nil {
		return nil, err
	}
	if e.typ != "blob" {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: errors.New("is a directory")}
	}
	data, err := f.blob(e)
	if err != nil {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: err}
	}
	return data, nil
}

// Stat returns the file info of name.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return info{f.root()}, nil
	}
	e, err := f.stat("stat", name)
	if err != nil {
		return nil, err
	}
	return info{e}, nil
}

// ReadDir lists the directory at name, sorted by file name.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	d, err := f.Open(name)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	rd, ok := d.(fs.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	return rd.ReadDir(-1)
}

// info is the fs.FileInfo and fs.DirEntry of a tree entry. Modification
// times are unknown and zero.
type info struct{ e entry }

func (i info) Name() string               { return i.e.name }
func (i info) Size() int64                { return max(i.e.size, 0) }
func (i info) Mode() fs.FileMode          { return i.e.fileMode() }
func (i info) ModTime() time.Time         { return time.Time{} }
func (i info) IsDir() bool                { return i.Mode().IsDir() }
func (i info) Sys() any                   { return nil }
func (i info) Type() fs.FileMode          { return i.Mode().Type() }
func (i info) Info() (fs.FileInfo, error) { return i, nil }
func (i info) String() string             { return fs.FormatFileInfo(i) }

type file struct {
	info info
	r    *bytes.Reader
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *file) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *file) Close() error               { return nil }

// Seek makes file an io.Seeker, as os.File is.
func (f *file) Seek(off int64, whence int) (int64, error) { return f.r.Seek(off, whence) }

var _ io.ReadSeeker = (*file)(nil)

type dir struct {
	fsys    *FS
	e       entry
	path    string
	entries []fs.DirEntry
	read    bool
	off     int
}

func (d *dir) Stat() (fs.FileInfo, error) { return info{d.e}, nil }
func (d *dir) Close() error               { return nil }
func (d *dir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.path, Err: errors.New("is a directory")}
}

// ReadDir lists the directory in name order. A submodule reads as empty.
func (d *dir) ReadDir(n int) ([]fs.DirEntry, error) {
	if !d.read {
		d.read = true
		if d.e.typ == "tree" {
			es, err := d.fsys.lsTree(d.e.object)
			if err != nil {
				return nil, &fs.PathError{Op: "readdir", Path: d.path, Err: err}
			}
			for _, e := range es {
				d.entries = append(d.entries, info{e})
			}
			// git orders trees as if their names ended in "/"; fs wants
			// plain name order.
			slices.SortFunc(d.entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		}
	}
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.off += n
	return rest[:n], nil
}
