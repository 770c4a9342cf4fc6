#!/usr/bin/env bash
# Install Debian packages whose command is missing. Args: command:package ... (a command
# starting with "/" is a file that the package installs, e.g. Tesseract's language data)
# Non-interactive (CI has no stdin and runs as root); uses sudo when not root.
set -euo pipefail
missing=()
for pair in "$@"; do
  cmd=${pair%%:*}; pkg=${pair#*:}
  if [[ "$cmd" == /* ]]; then
    [ -e "$cmd" ] || missing+=("$pkg")
  elif ! command -v "$cmd" >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/"$cmd" >/dev/null 2>&1; then
    missing+=("$pkg")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "Installing system packages: ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo -n"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
