//go:build !desktop

package app

import (
	"errors"
	"io"
)

func desktopCmd(args []string, stdout, stderr io.Writer) error {
	return errors.New("this binary has no desktop shell: build it with `make desktop` (bin/parley-desktop), or use `parley serve`")
}
