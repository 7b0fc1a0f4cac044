//go:build !unix

package serve

import "io/fs"

// inode is 0 where there are no inodes: time and size tell a change.
func inode(fs.FileInfo) uint64 { return 0 }
