#!/usr/bin/env bash
# Builds Parley's release artifacts (what `make dist VERSION=x.y.z` runs):
#
#   build/dist.sh [web] [desktop] [desktop-windows]    all when none is named
#
# web:     the web/CLI binary, pure Go, for every target in WEB_TARGETS.
# desktop: the Linux desktop app (cgo, WebKitGTK 4.1) for this machine's
#          architecture, as a .deb (nfpm, build/linux/nfpm.yaml) and a .tar.gz.
# desktop-windows: the Windows desktop app (Wails drives WebView2 through
#          syscalls, so it cross-builds without cgo), a GUI-subsystem .exe.
# Then SHA256SUMS of everything in the folder.
#
# Environment: VERSION (required, x.y.z), DIST_DIR (default dist),
# SOURCE_DATE_EPOCH (the build date; default now), GO (default go).
# Every binary is stripped and built with -trimpath, the flags `make build`
# and `make desktop` compile with too, so a release after a test run only
# links.
set -euo pipefail
cd "$(dirname "$0")/.."

WEB_TARGETS="linux/amd64 linux/arm64 darwin/arm64 darwin/amd64 windows/amd64"
DESKTOP_TAGS=desktop,production,webkit2_41

: "${VERSION:?set VERSION, e.g. make dist VERSION=1.2.3}"
[[ $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+~.][0-9A-Za-z.~+-]*)?$ ]] || { echo "VERSION must look like 1.2.3, not $VERSION" >&2; exit 1; }
GO=${GO:-go}
DIST_DIR=${DIST_DIR:-dist}
commit=$(git rev-parse HEAD)
date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%dT%H:%M:%SZ)
ldflags="-s -w -X parley/app.Version=$VERSION -X parley/app.Commit=$commit -X parley/app.BuildDate=$date"

parts=("$@")
((${#parts[@]})) || parts=(web desktop desktop-windows)
mkdir -p "$DIST_DIR"
DIST_DIR=$(cd "$DIST_DIR" && pwd)

web() {
  # One at a time: a cross build for a new target compiles the standard
  # library and every module for it.
  for t in $WEB_TARGETS; do
    local os=${t%/*} arch=${t#*/} ext=
    [[ $os == windows ]] && ext=.exe
    echo "build parley $VERSION $os/$arch" >&2
    CGO_ENABLED=0 GOOS=$os GOARCH=$arch "$GO" build -trimpath -ldflags "$ldflags" \
      -o "$DIST_DIR/parley-$VERSION-$os-$arch$ext" .
  done
}

desktop() {
  local goarch debarch stage
  goarch=$("$GO" env GOARCH)
  debarch=$(dpkg --print-architecture 2>/dev/null || echo "$goarch")
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' RETURN
  echo "build parley-desktop $VERSION linux/$goarch" >&2
  CGO_ENABLED=1 "$GO" build -trimpath -tags "$DESKTOP_TAGS" -ldflags "$ldflags" -o "$stage/parley-desktop" .

  # The .deb: nfpm reads build/linux/nfpm.yaml, which names its files
  # relative to the repository and the binary by $PARLEY_DESKTOP_BIN.
  PARLEY_DESKTOP_BIN=$stage/parley-desktop VERSION=$VERSION DEB_ARCH=$debarch SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(date +%s)} \
    "$GO" tool nfpm package --config build/linux/nfpm.yaml --packager deb --target "$DIST_DIR/parley-desktop_${VERSION}_$debarch.deb" >&2

  # The .tar.gz: the same files under one folder, to unpack anywhere.
  local name=parley-desktop-$VERSION-linux-$goarch
  mkdir -p "$stage/$name"
  install -m 0755 "$stage/parley-desktop" "$stage/$name/parley-desktop"
  install -m 0644 build/linux/parley.desktop "$stage/$name/parley.desktop"
  install -m 0644 build/appicon.png "$stage/$name/parley.png"
  tar -C "$stage" --owner=0 --group=0 --numeric-owner --sort=name \
    --mtime="@${SOURCE_DATE_EPOCH:-$(date +%s)}" -czf "$DIST_DIR/$name.tar.gz" "$name"
}

desktop_windows() {
  echo "build parley-desktop $VERSION windows/amd64" >&2
  CGO_ENABLED=0 GOOS=windows GOARCH=amd64 "$GO" build -trimpath -tags desktop,production \
    -ldflags "$ldflags -H windowsgui" -o "$DIST_DIR/parley-desktop-$VERSION-windows-amd64.exe" .
}

for p in "${parts[@]}"; do
  case $p in
    web) web ;;
    desktop) desktop ;;
    desktop-windows) desktop_windows ;;
    *) echo "unknown part $p (web, desktop, desktop-windows)" >&2; exit 2 ;;
  esac
done

(cd "$DIST_DIR" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | sort | xargs -r sha256sum > SHA256SUMS)
ls -l "$DIST_DIR" >&2
