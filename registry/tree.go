package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// maxLinks bounds the symbolic links followed to resolve one path.
const maxLinks = 40

// escapeError says that a schema path leaves the registry's directory tree,
// directly or through a symbolic link.
type escapeError struct {
	name   string // the path as asked for
	link   string // the link that leads out, or "" when name itself is outside
	target string // what link points to
}

func (e *escapeError) Error() string {
	if e.link == "" {
		return "leaves the registry's directory tree"
	}
	return fmt.Sprintf("leaves the registry's directory tree: symbolic link %q points to %q", e.link, e.target)
}

// resolveIn follows the symbolic links in name, a valid path of fsys, and
// returns the path of the file it names. It fails with an *escapeError
// when the result, or a link on the way, is outside dir (the directory of
// keys.yaml; "." for the whole of fsys): an absolute link target, a target
// that climbs above the root, or one that lands elsewhere in fsys. Links are
// read through fs.ReadLinkFS (os.DirFS, os.Root and a git tree implement
// it); in a file system without it a link is refused.
func resolveIn(fsys fs.FS, dir, name string) (string, error) {
	if !fs.ValidPath(name) || !within(dir, name) {
		return "", &escapeError{name: name}
	}
	rl, canRead := fsys.(fs.ReadLinkFS)
	done := ""                       // the resolved prefix, a valid path or ""
	rest := strings.Split(name, "/") // the components still to resolve
	for hops := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if done == "" {
				return "", &escapeError{name: name}
			}
			done = parent(done)
			continue
		}
		next := path.Join(done, c)
		if done == "" {
			next = c
		}
		var info fs.FileInfo
		var err error
		if canRead {
			info, err = rl.Lstat(next)
		} else {
			info, err = fs.Stat(fsys, next)
		}
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
			}
			return "", err
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		if !canRead {
			return "", fmt.Errorf("%q is a symbolic link, which cannot be followed here", next)
		}
		if hops++; hops > maxLinks {
			return "", fmt.Errorf("more than %d symbolic links", maxLinks)
		}
		target, err := rl.ReadLink(next)
		if err != nil {
			return "", err
		}
		if path.IsAbs(target) {
			return "", &escapeError{name: name, link: next, target: target}
		}
		// The target is relative to the link's directory, done. Resolve
		// it lexically from there, so that climbing above the root is
		// caught.
		joined := path.Join(done, target)
		if joined == ".." || strings.HasPrefix(joined, "../") || !within(dir, joined) {
			return "", &escapeError{name: name, link: next, target: target}
		}
		if joined == "." {
			joined = ""
		}
		done = ""
		rest = append(strings.Split(joined, "/"), rest...)
	}
	if done == "" || !within(dir, done) {
		return "", &escapeError{name: name}
	}
	return done, nil
}

// parent returns the directory of a resolved prefix, "" for the root.
func parent(p string) string {
	if d := path.Dir(p); d != "." {
		return d
	}
	return ""
}

// within reports whether p is dir or below it.
func within(dir, p string) bool {
	return dir == "." || dir == "" || p == dir || strings.HasPrefix(p, dir+"/")
}
