//go:build desktop

package app

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync/atomic"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"parley/ui"
)

// Window geometry: the sidebar (~260 px) plus a readable chat column.
const (
	windowWidth     = 1200
	windowHeight    = 800
	windowMinWidth  = 720
	windowMinHeight = 480
)

// desktopCmd runs `parley desktop`: the web-mode server on a random loopback
// port, shown in a Wails window. The window logs in with a one-time launch
// secret; PARLEY_TOKEN, when set, additionally lets API clients in with
// Authorization: Bearer (scripts and the desktop smoke test).
func desktopCmd(args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags("desktop", args, stderr, false)
	if err != nil {
		return err
	}
	c.Token = os.Getenv("PARLEY_TOKEN")
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	// No signal handling here: Wails closes the window on SIGINT and
	// SIGTERM itself, and Desktop then shuts down as on a close.
	return Desktop(context.Background(), c, withLimits(c, Options{Log: log}), func(url string) {
		fmt.Fprintf(stdout, "Parley desktop serving on %s\n", url)
	})
}

// Desktop runs the desktop shell until its window closes or ctx ends. It
// serves exactly what web mode serves, on 127.0.0.1 with a random port and
// the Host/Origin checks of a loopback listener; the window is pointed at it
// with a launch secret it exchanges once for an HttpOnly session cookie, so
// no other local process can use the server without PARLEY_TOKEN. ready gets
// the server's address (no secret in it) once it listens.
func Desktop(ctx context.Context, c Config, o Options, ready func(url string)) error {
	if runtime.GOOS == "linux" && os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		// GTK would panic; say what is wrong instead.
		return errNoDisplay
	}
	lock, err := lockDataDir(c.DataDir)
	if err != nil {
		return desktopOnRunning(ctx, c.DataDir, err, o.Log)
	}
	defer lock.release() // Close releases it once the instance is open
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen on 127.0.0.1: %w", err)
	}
	// Scripts reach the desktop's API with the data folder's token (or
	// PARLEY_TOKEN), as they reach web mode; the window logs in with a
	// one-time launch secret instead.
	if c.Token, err = accessToken(c); err != nil {
		ln.Close()
		return err
	}
	auth := ui.NewAuth(c.Token)
	o.Auth = auth
	// The window's native folder picker chooses a chat's workspace; the
	// server runs in this process, so it can open the dialog itself.
	var window atomic.Pointer[context.Context]
	o.PickFolder = func(context.Context) (string, error) {
		wctx := window.Load()
		if wctx == nil {
			return "", errors.New("the window is not ready")
		}
		return wruntime.OpenDirectoryDialog(*wctx, wruntime.OpenDialogOptions{Title: "Choose the chat's workspace folder", CanCreateDirectories: true})
	}
	in, err := openLocked(ctx, c, o, lock)
	if err != nil {
		ln.Close()
		return err
	}
	defer in.Close()

	_, port, _ := net.SplitHostPort(ln.Addr().String())
	base := "http://127.0.0.1:" + port
	if remove, err := writeDesktopAddress(c.DataDir, desktopAddress{URL: base, Token: c.Token}); err != nil {
		in.Log.Warn("scripts will not find this app", "err", err)
	} else {
		defer remove()
	}
	launch := base + auth.LaunchPath()

	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	served := make(chan error, 1)
	go func() { served <- in.serve(serveCtx, ln, true, nil) }()
	// What needs the user at once shows as an OS notification while the
	// window is not in front; without a notification server it is only
	// in the inbox.
	if alerter, err := newDBusAlerter(); err != nil {
		in.Log.Info("no OS notifications", "err", err)
	} else {
		defer alerter.Close()
		go watchAlerts(serveCtx, in.Runtime, in.UI.Focused, alerter, in.Log)
	}
	if ready != nil {
		ready(base)
	}

	err = wails.Run(windowOptions(ctx, launch, in.Log, func(wctx context.Context) { window.Store(&wctx) }))
	// The window is gone: stop serving, then (deferred) stop every run and
	// close the store, as on a web-mode shutdown.
	stopServing()
	serr := <-served
	if err != nil {
		return fmt.Errorf("desktop window: %w", err)
	}
	return serr
}

var errNoDisplay = errors.New("no display (DISPLAY and WAYLAND_DISPLAY are unset): the desktop window needs a graphical session; `parley serve` serves the same app to a browser")

// launchPage is the window's start page, served from Wails' own asset
// server: it replaces itself with the server's one-time login link (spent by
// the first request, and replaced in the history by the app in turn). The
// fallback of serving the app through this asset server instead, with no
// port at all, is described in DESIGN.md; it is not a second code path.
func launchPage(launch string) http.Handler {
	page := launchTmpl
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" && r.URL.Path != "/index.html" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := page.Execute(w, launch); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
}

var launchTmpl = template.Must(template.New("launch").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Parley</title>
<script>location.replace({{.}});</script>
</head><body style="font:16px system-ui,sans-serif;color:#555;padding:2em">Starting Parley…</body></html>`))

// wailsLog sends Wails' log lines to Parley's logger.
type wailsLog struct{ l *slog.Logger }

func (w wailsLog) Print(m string)   { w.l.Info(m, "from", "wails") }
func (w wailsLog) Trace(m string)   { w.l.Debug(m, "from", "wails") }
func (w wailsLog) Debug(m string)   { w.l.Debug(m, "from", "wails") }
func (w wailsLog) Info(m string)    { w.l.Info(m, "from", "wails") }
func (w wailsLog) Warning(m string) { w.l.Warn(m, "from", "wails") }
func (w wailsLog) Error(m string)   { w.l.Error(m, "from", "wails") }
func (w wailsLog) Fatal(m string)   { w.l.Error(m, "from", "wails") }

// windowOptions is Parley's window: it opens on launch (a login link), the
// caller's ctx closes it like its close button does, and started is told
// the window's context.
func windowOptions(ctx context.Context, launch string, log *slog.Logger, started func(wctx context.Context)) *options.App {
	return &options.App{
		Title:            "Parley",
		Width:            windowWidth,
		Height:           windowHeight,
		MinWidth:         windowMinWidth,
		MinHeight:        windowMinHeight,
		BackgroundColour: &options.RGBA{R: 255, G: 255, B: 255, A: 255},
		AssetServer:      &assetserver.Options{Handler: launchPage(launch)},
		OnStartup: func(wctx context.Context) {
			if started != nil {
				started(wctx)
			}
			context.AfterFunc(ctx, func() { wruntime.Quit(wctx) })
		},
		Linux: &linux.Options{
			Icon: Icon,
			// Software rendering: works on every driver and under Xvfb;
			// a chat app gains nothing from the GPU.
			WebviewGpuPolicy: linux.WebviewGpuPolicyNever,
		},
		Logger: wailsLog{log},
	}
}
