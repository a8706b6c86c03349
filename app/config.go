package app

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"parley/agentcore/llm"
)

// Config is everything a Parley process is told.
type Config struct {
	Addr      string // web mode only
	DataDir   string
	Workspace string
	Model     string // "" = the first provider with a key, else demo/scripted
	Demo      bool
	Token     string
	Getenv    func(string) string
	// FirstTokenTimeout and IdleTimeout are the global time limits of
	// --first-token-timeout and --idle-timeout (0: the environment's, else
	// llm's defaults); a provider's own in Settings wins over them.
	FirstTokenTimeout time.Duration
	IdleTimeout       time.Duration
}

// DBPath is the SQLite file.
func (c Config) DBPath() string { return filepath.Join(c.DataDir, "parley.db") }

// parseFlags reads a command's flags with the environment as defaults.
func parseFlags(name string, args []string, stderr io.Writer, web bool) (Config, error) {
	c := Config{Getenv: os.Getenv}
	fs := flag.NewFlagSet("parley "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if web {
		fs.StringVar(&c.Addr, "addr", "127.0.0.1:7777", "address to listen on; a non-loopback address needs --token")
		fs.StringVar(&c.Token, "token", os.Getenv("PARLEY_TOKEN"), "require this token on every request (env PARLEY_TOKEN)")
	}
	fs.StringVar(&c.DataDir, "data", os.Getenv("PARLEY_DATA_DIR"), "data folder holding parley.db (env PARLEY_DATA_DIR)")
	fs.StringVar(&c.Workspace, "workspace", "", "folder the agent works in (default: the current folder)")
	fs.StringVar(&c.Model, "model", os.Getenv("PARLEY_MODEL"), "model as provider/model (env PARLEY_MODEL)")
	fs.BoolVar(&c.Demo, "demo", false, "use the scripted demo model, even when a provider key is set")
	runs := web || name == "desktop" // the commands that talk to models
	if runs {
		fs.Func("first-token-timeout", "how long a model may take before its first token, e.g. 15m (env "+llm.FirstTokenTimeoutEnv+"; default 10m)", limitFlag(&c.FirstTokenTimeout))
		fs.Func("idle-timeout", "how long a model may fall silent after its first token, e.g. 3m (env "+llm.IdleTimeoutEnv+"; default 90s)", limitFlag(&c.IdleTimeout))
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if runs {
		// A flag wins over its variable; a bad variable is told now, not at
		// the first message.
		if _, _, err := llm.Timeouts(c.llm(), ""); err != nil {
			return c, errors.New(strings.TrimPrefix(err.Error(), "llm: "))
		}
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.DataDir == "" {
		d, err := defaultDataDir()
		if err != nil {
			return c, err
		}
		c.DataDir = d
	}
	if c.Workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return c, fmt.Errorf("find the workspace: %w", err)
		}
		c.Workspace = wd
	}
	return c, nil
}

// limitFlag reads a time limit flag.
func limitFlag(d *time.Duration) func(string) error {
	return func(s string) error {
		v, err := llm.ParseTimeout(s)
		if err != nil {
			return err
		}
		*d = v
		return nil
	}
}

// llm is the provider configuration the command line gives: its time
// limits, and the environment for the rest.
func (c Config) llm() llm.Config {
	return llm.Config{Getenv: c.Getenv, FirstTokenTimeout: c.FirstTokenTimeout, IdleTimeout: c.IdleTimeout}
}

// withLimits gives the instance the command line's time limits, unless
// the caller set its own.
func withLimits(c Config, o Options) Options {
	o.LLM.FirstTokenTimeout = cmp.Or(o.LLM.FirstTokenTimeout, c.FirstTokenTimeout)
	o.LLM.IdleTimeout = cmp.Or(o.LLM.IdleTimeout, c.IdleTimeout)
	return o
}

// defaultDataDir is the OS's per-user data folder plus "parley".
func defaultDataDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the data folder (set --data or PARLEY_DATA_DIR): %w", err)
	}
	switch runtime.GOOS {
	case "darwin":
		return filepath.Join(home, "Library", "Application Support", "parley"), nil
	case "windows":
		if d := os.Getenv("LOCALAPPDATA"); d != "" {
			return filepath.Join(d, "parley"), nil
		}
		return filepath.Join(home, "AppData", "Local", "parley"), nil
	default:
		if d := os.Getenv("XDG_DATA_HOME"); d != "" {
			return filepath.Join(d, "parley"), nil
		}
		return filepath.Join(home, ".local", "share", "parley"), nil
	}
}

// isLoopback reports whether addr (host:port) listens on loopback only.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

var errExposed = errors.New("refusing to listen on a non-loopback address without a token: set --token or PARLEY_TOKEN (every request will then need it)")

// loopbackHosts are the Host values a loopback listener on addr answers
// to: its own address (127.0.0.2:P, [::1]:P…) and the usual names of the
// loopback on its port.
func loopbackHosts(addr net.Addr) []string {
	host, port, _ := net.SplitHostPort(addr.String())
	hosts := []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port}
	if own := net.JoinHostPort(host, port); !slices.Contains(hosts, own) {
		hosts = append(hosts, own)
	}
	return hosts
}
