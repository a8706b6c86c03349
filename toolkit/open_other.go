//go:build !unix

package toolkit

// openNoWait: Windows has no FIFOs to block open(2) with, nor O_NOFOLLOW;
// the Lstat and fstat checks still refuse what is not a regular file.
const openNoWait = 0
