#!/usr/bin/env bash
# Installs what the Node.js tests need besides Debian's chromium: Node.js and npm (Debian's,
# unless the machine has them already), then each test's npm packages at the versions of its
# package-lock.json (`npm ci`: exactly the lock file, no browser download):
#   tests/browser     playwright-core (the dashboard's browser test), ollama (the Ollama client test)
#   tests/kubernetes  kubernetes-models, @kubernetes-models/gateway-api, ajv, yaml (the manifests)
# Idempotent: npm runs again in a folder only when its lock file changed.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v npm >/dev/null; then
  scripts/install-deps.sh nodejs npm
fi
for dir in tests/browser tests/kubernetes; do
  stamp="$dir/node_modules/.installed-from-lock"
  if ! cmp -s "$dir/package-lock.json" "$stamp" 2>/dev/null; then
    echo "install-browser-test: npm ci in $dir" >&2
    npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >/dev/null
    cp "$dir/package-lock.json" "$stamp"
  fi
done
