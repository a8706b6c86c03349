//go:build unix

package toolkit

import "syscall"

// openNoWait are the open flags of a file a tool reads: O_NONBLOCK, so
// that a FIFO put in place of a checked file does not block open(2) for
// ever (fstat then refuses it), and O_NOFOLLOW, so that a symbolic link
// put there after the path was resolved is not followed.
const openNoWait = syscall.O_NONBLOCK | syscall.O_NOFOLLOW
