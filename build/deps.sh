#!/usr/bin/env bash
# Installs the system packages `make test` needs, once: a no-op (one
# dpkg-query) when they are all there. `build/deps.sh desktop` checks only
# what the desktop build needs (cgo, GTK, WebKitGTK), for `make dist`.
#
# What uses them: gcc and libc6-dev for cgo (the desktop build, go test
# -race); pkg-config and the GTK 3 / WebKitGTK 4.1 dev packages for the
# desktop build; chromium (/usr/bin/chromium) for the browser e2e tests;
# xvfb and xauth for xvfb-run; imagemagick (import) and xdotool for the
# desktop smoke test; dbus-daemon for the notification test's private bus;
# node and npm for the mastra CLI e2e client; git for `make check`.
set -euo pipefail

desktop=(gcc libc6-dev pkg-config libgtk-3-dev libwebkit2gtk-4.1-dev)
debian=("${desktop[@]}" chromium xvfb xauth imagemagick xdotool dbus-daemon git)
fedora="gcc glibc-devel pkgconf-pkg-config gtk3-devel webkit2gtk4.1-devel chromium xorg-x11-server-Xvfb xorg-x11-xauth ImageMagick xdotool dbus-daemon nodejs npm git"
arch="gcc pkgconf gtk3 webkit2gtk-4.1 chromium xorg-server-xvfb xorg-xauth imagemagick xdotool dbus nodejs npm git"

want=("${debian[@]}")
node=1
if [[ ${1:-} == desktop ]]; then
  want=("${desktop[@]}")
  node=0
fi

if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
  # Not Debian or Ubuntu: say what to install and stop, unless the
  # commands and libraries are already there.
  cmds=(gcc pkg-config) mods=(gtk+-3.0 webkit2gtk-4.1)
  if ((node)); then cmds+=(chromium xvfb-run xauth import xdotool dbus-daemon node npm git); fi
  ok=1
  for c in "${cmds[@]}"; do command -v "$c" >/dev/null || ok=0; done
  ((ok)) && pkg-config --exists "${mods[@]}" 2>/dev/null && exit 0
  cat >&2 <<MSG
Parley's desktop build and tests need system packages, and this machine has no apt-get to install them:
  Debian/Ubuntu: apt-get install ${debian[*]} nodejs npm
  Fedora:        dnf install $fedora
  Arch:          pacman -S $arch
Install them, then run make again.
MSG
  exit 1
fi

# One dpkg-query for all of them; a package dpkg has never heard of is
# missing too (it is not in the output).
installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${want[@]}" 2>/dev/null | awk '$2 == "ii" { print $1 }' || true)
need=()
for p in "${want[@]}"; do
  grep -qx -- "$p" <<<"$installed" || need+=("$p")
done
# node and npm may come from elsewhere (NodeSource's nodejs carries npm), so
# they count as there when the commands are.
if ((node)) && ! { command -v node && command -v npm; } >/dev/null; then
  need+=(nodejs npm)
fi
((${#need[@]})) || exit 0

sudo=()
if ((EUID != 0)); then
  if ! command -v sudo >/dev/null; then
    echo "Parley's tests need these packages: ${need[*]}; run as root: apt-get update && apt-get install ${need[*]}" >&2
    exit 1
  fi
  echo "Installing ${need[*]} with apt-get needs root: asking sudo." >&2
  sudo=(sudo)
fi
echo "installing: ${need[*]}" >&2
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
