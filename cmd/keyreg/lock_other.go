//go:build !unix

package main

import "os"

// lockFile does nothing where flock(2) is missing.
func lockFile(*os.File) {}

// tryLock reports false where flock(2) is missing: no temporary file is
// known to be stale, so none is removed.
func tryLock(*os.File) bool { return false }
