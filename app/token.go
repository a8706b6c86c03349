package app

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// tokenFile holds the data folder's access token: every request to Parley
// needs it (or a session the token was traded for), on loopback too, so no
// other program or account on the machine can act through Parley. Made on
// first start, readable by its owner only, kept across restarts so a
// bookmarked login link and scripts keep working.
const tokenFile = "token"

// tokenPattern is what a token may look like: it goes into URLs and headers
// as it is.
var tokenPattern = regexp.MustCompile(`^[!-~]{1,512}$`)

// TokenPath is where the data folder keeps its token.
func TokenPath(dataDir string) string { return filepath.Join(dataDir, tokenFile) }

// LoadToken returns the data folder's token, making it on first use. A token
// file others may read is made private again; one that holds no valid token
// is replaced.
func LoadToken(dataDir string) (string, error) {
	path := TokenPath(dataDir)
	if t, err := readToken(path); err == nil {
		return t, nil
	} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errBadToken) {
		return "", err
	}
	return saveToken(dataDir, newToken())
}

// SetToken makes t the data folder's token (--token, PARLEY_TOKEN), so
// `parley token` and `parley api` agree with the running server.
func SetToken(dataDir, t string) (string, error) {
	if !tokenPattern.MatchString(t) {
		return "", fmt.Errorf("the token must be 1 to 512 printable ASCII characters without spaces (got %d bytes)", len(t))
	}
	if cur, err := readToken(TokenPath(dataDir)); err == nil && cur == t {
		return t, nil
	}
	return saveToken(dataDir, t)
}

var errBadToken = errors.New("no valid token in the file")

func readToken(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("read the token: %s is not a regular file", path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read the token: %w", err)
	}
	t := strings.TrimSpace(string(raw))
	if !tokenPattern.MatchString(t) {
		return "", errBadToken
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return "", fmt.Errorf("make the token private (%s is readable by others): %w", path, err)
		}
	}
	return t, nil
}

// saveToken writes t atomically with mode 0600.
func saveToken(dataDir, t string) (string, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", fmt.Errorf("make the data folder: %w", err)
	}
	tmp, err := os.CreateTemp(dataDir, ".token-*")
	if err != nil {
		return "", fmt.Errorf("save the token: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", fmt.Errorf("save the token: %w", err)
	}
	if _, err := tmp.WriteString(t + "\n"); err != nil {
		tmp.Close()
		return "", fmt.Errorf("save the token: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("save the token: %w", err)
	}
	if err := os.Rename(tmp.Name(), TokenPath(dataDir)); err != nil {
		return "", fmt.Errorf("save the token: %w", err)
	}
	return t, nil
}

// accessToken is the token this process answers to: --token or
// PARLEY_TOKEN when given (saved as the folder's token), else the folder's.
func accessToken(c Config) (string, error) {
	if c.Token != "" {
		return SetToken(c.DataDir, c.Token)
	}
	return LoadToken(c.DataDir)
}

// tokenCmd prints the data folder's token: `parley token`.
func tokenCmd(args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags("token", args, stderr, false)
	if err != nil {
		return err
	}
	t, err := LoadToken(c.DataDir)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, t)
	return nil
}
