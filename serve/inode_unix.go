//go:build unix

package serve

import (
	"io/fs"
	"syscall"
)

// inode is the file's inode number, so that a registry replaced by a
// rename (as editors and ConfigMap updates do) reads as changed.
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
