#!/usr/bin/env bash
# Installs what the Node.js tests in tests/browser need besides Debian's chromium: Node.js and npm
# (Debian's, unless the machine has them already), playwright-core (the dashboard's browser test)
# and the `ollama` client (the Ollama client test) at the versions of
# tests/browser/package-lock.json (`npm ci`: exactly the lock file, no browser download).
# Idempotent: npm runs again only when the lock file changed.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v npm >/dev/null; then
  scripts/install-deps.sh nodejs npm
fi
dir=tests/browser
stamp="$dir/node_modules/.installed-from-lock"
if ! cmp -s "$dir/package-lock.json" "$stamp" 2>/dev/null; then
  echo "install-browser-test: npm ci in $dir" >&2
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >/dev/null
  cp "$dir/package-lock.json" "$stamp"
fi
