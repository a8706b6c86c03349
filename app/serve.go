package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"
)

// shutdownGrace bounds how long open requests get to finish on exit.
const shutdownGrace = 5 * time.Second

func serveCmd(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := lowerPriority(serveNice); err != nil {
		fmt.Fprintf(stderr, "parley: could not lower the server's priority below the browser's (%v); it runs at its own\n", err)
	}
	return runServe(ctx, args, stdout, stderr)
}

// runServe is `parley serve` until ctx ends. At start it says where the
// agent works and where the data is kept: `make run` in a checkout makes
// that checkout the workspace, which nobody should learn by surprise.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags("serve", args, stderr, true)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if path := os.Getenv("PARLEY_CPUPROFILE"); path != "" {
		stopProfile, err := profileCPU(path)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	if path := os.Getenv("PARLEY_MEMPROFILE"); path != "" {
		defer profileMemory(path, log)
	}
	return Serve(ctx, c, withLimits(c, Options{Log: log}), func(url string) {
		fmt.Fprintf(stdout, "Parley is running at %s\n", url)
		fmt.Fprintf(stdout, "Workspace (the agent reads and writes here): %s  (choose another with --workspace)\n", c.Workspace)
		fmt.Fprintf(stdout, "Data folder (chats, settings, keys): %s  (choose another with --data)\n", c.DataDir)
	})
}

// listenError says what to do when the address cannot be listened on; a
// taken port names the address and the flag that picks another.
func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		other := "127.0.0.1:7778"
		if host, port, err := net.SplitHostPort(addr); err == nil {
			if p, err := strconv.Atoi(port); err == nil && p > 0 && p < 65535 {
				other = net.JoinHostPort(host, strconv.Itoa(p+1))
			}
		}
		return fmt.Errorf("%s is already in use by another program: choose another address with --addr %s (through make: make run ARGS=\"--addr %s\")", addr, other, other)
	}
	return fmt.Errorf("listen on %s: %w", addr, err)
}

// Serve runs web mode until ctx ends. ready is called with the address to
// open once the server listens.
func Serve(ctx context.Context, c Config, o Options, ready func(url string)) error {
	loopback := isLoopback(c.Addr)
	if !loopback && c.Token == "" {
		return errExposed
	}
	// The folder before the port: a second Parley on it is told so, not
	// that the port is taken.
	lock, err := lockDataDir(c.DataDir)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		lock.release()
		return listenError(c.Addr, err)
	}
	in, err := openLocked(ctx, c, o, lock)
	if err != nil {
		ln.Close()
		return err
	}
	defer in.Close()
	return in.serve(ctx, ln, loopback, ready)
}

// BaseURL is the address a listener is reached at, as bound (127.0.0.2:P,
// [::1]:P); a wildcard listener is shown as its loopback.
func BaseURL(addr net.Addr) string {
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// LoginURL is the address that logs a browser in: the token is traded for
// a session cookie and the browser goes on to the same address without it.
func LoginURL(addr net.Addr, token string) string {
	return BaseURL(addr) + "/?token=" + url.QueryEscape(token)
}

// serve answers on ln until ctx ends.
func (in *Instance) serve(ctx context.Context, ln net.Listener, loopback bool, ready func(url string)) error {
	if loopback {
		in.UI.AllowHosts(loopbackHosts(ln.Addr())...)
	} // else: any Host, every request needs the token
	srv := &http.Server{Handler: in.UI.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	if err := in.lock.setURL(BaseURL(ln.Addr())); err != nil {
		in.Log.Warn("a second Parley on this data folder will not be told where this one is", "err", err)
	}
	if ready != nil {
		ready(LoginURL(ln.Addr(), in.Config.Token))
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	in.UI.Shutdown()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		// What did not finish in the grace period is cut off, not left behind.
		err = srv.Close()
	}
	return err
}

// profileCPU writes a CPU profile of the whole serve to path (for
// `go tool pprof`), as `go test -cpuprofile` does for a test; the README's
// benchmarks name it. It returns what ends the profile.
func profileCPU(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("PARLEY_CPUPROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("PARLEY_CPUPROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// profileMemory writes a heap profile of the whole serve to path (for
// `go tool pprof -sample_index=alloc_space`: what was allocated, and
// where), as `go test -memprofile` does for a test.
func profileMemory(path string, log *slog.Logger) {
	f, err := os.Create(path)
	if err != nil {
		log.Error("PARLEY_MEMPROFILE", "err", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		log.Error("PARLEY_MEMPROFILE", "err", err)
	}
}
