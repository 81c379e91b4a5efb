#!/usr/bin/env bash
# Installs whatever is missing for `npm start` (mode: app) or `npm test` (mode: test).
# Idempotent: a second run on a set-up machine does nothing and takes well under a second.
set -euo pipefail
mode="${1:-test}"
cd "$(dirname "$0")/.."

apt_pkgs=(chromium libvulkan1 python3-h5py python3-hdf5plugin python3-numpy bitshuffle lz4)

missing_apt() {
  local p
  for p in "${apt_pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
  done
}

if [ "$mode" = test ] && command -v dpkg-query >/dev/null 2>&1; then
  mapfile -t need < <(missing_apt)
  if [ "${#need[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "setup: installing Debian packages: ${need[*]}"
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
    else
      echo "setup: these Debian packages are missing and this user cannot install them: ${need[*]}" >&2
      echo "setup: run as root once, or: sudo apt-get install -y ${need[*]}" >&2
      exit 1
    fi
  fi
fi

# npm packages: install when node_modules is absent or older than the lock file.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm packages"
  npm ci --no-audit --no-fund --loglevel=error
fi
