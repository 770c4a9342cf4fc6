#!/usr/bin/env bash
# pip-install a requirements file into .venv only when its content changed since the last
# successful install (content hash, not mtime: Reflex rewrites requirements.txt in place).
set -euo pipefail
req=$1
venv=${VENV:-.venv}
stamp="$venv/.installed-$(basename "$req").sha256"
want=$( (sha256sum "$req"; "$venv/bin/python" -V) | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "deps: $req unchanged, nothing to install"
  exit 0
fi
echo "deps: installing $req"
"$venv/bin/pip" install -q -r "$req" 2>&1 | { grep -v "is ignored" || true; }
echo "$want" > "$stamp"
