// Package build is where Parley's packaging lives (deps.sh, dist.sh, the
// desktop files, nfpm.yaml); its tests build release artifacts with dist.sh,
// as `make dist` does, and look inside them.
package build

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	testVersion = "1.2.3"
	// sourceDate is the build date dist.sh stamps (SOURCE_DATE_EPOCH), so
	// that the test knows what `parley version` must print.
	sourceDate     = "1000000000"
	sourceDateText = "2001-09-09T01:46:40Z"
	// serveTimeout bounds the unpacked binary's start-up to its first
	// answer; it opens an SQLite file and starts the demo model.
	serveTimeout = 30 * time.Second
)

// dist runs build/dist.sh with the parts named into a temporary folder and
// returns the folder.
func dist(t *testing.T, parts ...string) string {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command("bash", append([]string{"dist.sh"}, parts...)...)
	cmd.Env = append(os.Environ(), "VERSION="+testVersion, "DIST_DIR="+out, "SOURCE_DATE_EPOCH="+sourceDate)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dist.sh %s: %v\n%s", strings.Join(parts, " "), err, b)
	}
	return out
}

// headCommit is the commit dist.sh stamps into the binaries.
func headCommit(t *testing.T) string {
	t.Helper()
	b, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// output runs a command and returns what it printed; it fails the test with
// what the command said on stderr.
func output(t *testing.T, name string, args ...string) string {
	t.Helper()
	b, err := exec.Command(name, args...).Output()
	if err != nil {
		var stderr []byte
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, stderr)
	}
	return string(b)
}

func checkVersion(t *testing.T, bin string) {
	t.Helper()
	got := strings.TrimSpace(output(t, bin, "version"))
	want := fmt.Sprintf("parley %s (commit %s, built %s)", testVersion, headCommit(t), sourceDateText)
	if got != want {
		t.Errorf("%s version:\n got %q\nwant %q", filepath.Base(bin), got, want)
	}
}

func size(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestDistWeb builds the web binary for every release target and the Windows
// desktop app (all pure Go) and checks each is there; the one for this
// machine, if any, must say its version.
func TestDistWeb(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test cross-builds five binaries (make test runs it without -short)")
	}
	out := dist(t, "web", "desktop-windows")
	for _, target := range []string{"linux/amd64", "linux/arm64", "darwin/arm64", "darwin/amd64", "windows/amd64"} {
		goos, goarch, _ := strings.Cut(target, "/")
		name := fmt.Sprintf("parley-%s-%s-%s", testVersion, goos, goarch)
		if goos == "windows" {
			name += ".exe"
		}
		n := size(t, filepath.Join(out, name))
		if n == 0 {
			t.Errorf("%s is empty", name)
		}
		fmt.Printf("BENCH dist_web_%s_%s %d bytes\n", goos, goarch, n)
		if goos == runtime.GOOS && goarch == runtime.GOARCH {
			checkVersion(t, filepath.Join(out, name))
		}
	}
	// Not run here: that it is a Windows executable is what can be checked.
	exe := filepath.Join(out, fmt.Sprintf("parley-desktop-%s-windows-amd64.exe", testVersion))
	if b, err := os.ReadFile(exe); err != nil || len(b) < 2 || string(b[:2]) != "MZ" {
		t.Errorf("%s is not a Windows executable (%v)", filepath.Base(exe), err)
	} else {
		fmt.Printf("BENCH dist_desktop_windows_amd64 %d bytes\n", len(b))
	}
	checkSums(t, out)
}

// TestDistDeb builds the desktop .deb and .tar.gz, checks the package's
// control fields and files, unpacks it and runs what it installs: `version`
// and `serve` up to its first answer.
func TestDistDeb(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test builds the desktop app and its .deb (make test runs it without -short)")
	}
	arch := strings.TrimSpace(output(t, "dpkg", "--print-architecture"))
	out := dist(t, "desktop")
	deb := filepath.Join(out, fmt.Sprintf("parley-desktop_%s_%s.deb", testVersion, arch))
	fmt.Printf("BENCH dist_deb_%s %d bytes\n", arch, size(t, deb))

	fields := map[string]string{}
	for _, line := range strings.Split(output(t, "dpkg-deb", "-f", deb, "Package", "Version", "Architecture", "Depends"), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			fields[k] = v
		}
	}
	for k, want := range map[string]string{"Package": "parley", "Version": testVersion, "Architecture": arch} {
		if fields[k] != want {
			t.Errorf("control %s = %q, want %q", k, fields[k], want)
		}
	}
	depends := map[string]bool{}
	for _, d := range strings.Split(fields["Depends"], ",") {
		for _, alt := range strings.Split(d, "|") {
			depends[strings.Fields(alt)[0]] = true
		}
	}
	for _, lib := range []string{"libc6", "libgtk-3-0", "libwebkit2gtk-4.1-0", "libjavascriptcoregtk-4.1-0", "libsoup-3.0-0", "libglib2.0-0"} {
		if !depends[lib] {
			t.Errorf("Depends %q lacks %s", fields["Depends"], lib)
		}
	}

	contents := output(t, "dpkg-deb", "-c", deb)
	for _, f := range []string{"./usr/bin/parley-desktop", "./usr/share/applications/parley.desktop", "./usr/share/icons/hicolor/512x512/apps/parley.png"} {
		if !strings.Contains(contents, " "+f+"\n") {
			t.Errorf("the .deb lacks %s:\n%s", f, contents)
		}
	}

	tgz := output(t, "tar", "-tzf", filepath.Join(out, fmt.Sprintf("parley-desktop-%s-linux-%s.tar.gz", testVersion, runtime.GOARCH)))
	for _, f := range []string{"parley-desktop", "parley.desktop", "parley.png"} {
		if !strings.Contains(tgz, fmt.Sprintf("parley-desktop-%s-linux-%s/%s\n", testVersion, runtime.GOARCH, f)) {
			t.Errorf("the .tar.gz lacks %s:\n%s", f, tgz)
		}
	}
	checkSums(t, out)

	root := t.TempDir()
	output(t, "dpkg-deb", "-x", deb, root)
	bin := filepath.Join(root, "usr/bin/parley-desktop")
	checkVersion(t, bin)
	serveFirstAnswer(t, bin)
}

// checkSums checks that SHA256SUMS names every other file and that each sum
// holds.
func checkSums(t *testing.T, dir string) {
	t.Helper()
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "SHA256SUMS" && !strings.Contains(string(sums), "  "+e.Name()+"\n") {
			t.Errorf("SHA256SUMS lacks %s:\n%s", e.Name(), sums)
		}
	}
	cmd := exec.Command("sha256sum", "--check", "--quiet", "SHA256SUMS")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("sha256sum --check: %v\n%s", err, b)
	}
}

// serveFirstAnswer runs `bin serve` on a free port with its own data folder
// until it prints the login address, then asks for the home page with the
// token it wrote.
func serveFirstAnswer(t *testing.T, bin string) {
	t.Helper()
	data := t.TempDir()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", data, "--workspace", data, "--demo")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	cmd.Stderr = io.Discard
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		quit := time.AfterFunc(10*time.Second, func() { _ = cmd.Process.Kill() })
		defer quit.Stop()
		_ = cmd.Wait()
	}()
	found := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if _, u, ok := strings.Cut(lines.Text(), "running at "); ok {
				found <- strings.TrimSpace(u)
				break
			}
		}
		close(found)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var login string
	select {
	case login = <-found:
	case <-time.After(serveTimeout):
		t.Fatalf("parley serve said nothing for %s", serveTimeout)
	}
	if login == "" {
		t.Fatal("parley serve ended without saying where it runs")
	}
	u, err := url.Parse(login)
	if err != nil {
		t.Fatalf("login address %q: %v", login, err)
	}
	token, err := os.ReadFile(filepath.Join(data, "token"))
	if err != nil {
		t.Fatalf("the token serve wrote: %v", err)
	}
	if got := u.Query().Get("token"); got != strings.TrimSpace(string(token)) {
		t.Errorf("login address token %q, token file %q", got, token)
	}
	req, _ := http.NewRequest("GET", "http://"+u.Host+"/", nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("first request: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET / with the token: %d, want 200", resp.StatusCode)
	}
	// The server runs below the browser (app.serveNice), every thread of it.
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", cmd.Process.Pid, task.Name()))
		if err != nil {
			continue // the thread ended
		}
		_, rest, _ := strings.Cut(string(stat), ") ")
		if fields := strings.Fields(rest); len(fields) < 17 || fields[16] != "10" {
			t.Errorf("parley serve's thread %s does not run at nice 10: stat %q", task.Name(), stat)
		}
	}
}
