//go:build unix

package main

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f, held until f is closed
// or the process ends; failure is ignored (the file is then never seen as
// held, and removed only once stale by age and unlocked).
func lockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

// tryLock reports whether f could be locked: no live process holds it.
func tryLock(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
