//go:build unix

package remedy

import (
	"os"
	"syscall"
)

// lock takes an exclusive advisory lock on the journal, held until it is
// closed or the process ends (a kill -9 releases it), and reports whether
// no other run holds it.
func lock(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
