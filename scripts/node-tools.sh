#!/usr/bin/env bash
# Install the Node tools the package suite needs into .tools/ (git-ignored), without touching the
# system Node: Node 22 (the npm package `node@22`), the MCP Inspector 2.x (needs Node >= 22.19) and
# the official MCP conformance suite (needs Node >= 22).
#   .tools/node22/node_modules/node/bin/node
#   .tools/inspector/node_modules/@modelcontextprotocol/inspector/...       (bin: mcp-inspector)
#   .tools/conformance/node_modules/@modelcontextprotocol/conformance/...   (bin: conformance)
# Idempotent: does nothing (and needs no network) once all three are in place. Progress goes to
# stderr; stdout stays empty. Never prompts (CI, no stdin).
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_MAJOR=22
INSPECTOR_VERSION=2.12.0
CONFORMANCE_VERSION=0.1.16
NODE_DIR=.tools/node22
INSPECTOR_DIR=.tools/inspector
CONFORMANCE_DIR=.tools/conformance
NODE_BIN=$NODE_DIR/node_modules/node/bin/node
INSPECTOR_BIN=$INSPECTOR_DIR/node_modules/.bin/mcp-inspector
CONFORMANCE_BIN=$CONFORMANCE_DIR/node_modules/.bin/conformance

say() { echo "node-tools: $*" >&2; }

node_ok() {
  [ -x "$NODE_BIN" ] && "$NODE_BIN" --version 2>/dev/null | grep -q "^v$NODE_MAJOR\."
}

# npm writes node_modules/.package-lock.json only when an install completes; the bin must run.
inspector_ok() {
  [ -f "$INSPECTOR_DIR/node_modules/.package-lock.json" ] && node_ok \
    && [ "$("$NODE_BIN" "$INSPECTOR_BIN" --version 2>/dev/null)" = "$INSPECTOR_VERSION" ]
}

conformance_ok() {
  [ -f "$CONFORMANCE_DIR/node_modules/.package-lock.json" ] && node_ok \
    && [ "$("$NODE_BIN" "$CONFORMANCE_BIN" --version 2>/dev/null)" = "$CONFORMANCE_VERSION" ]
}

if node_ok && inspector_ok && conformance_ok; then
  exit 0
fi

if ! command -v npm >/dev/null; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
    say "npm not found; installing Debian's nodejs and npm"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq nodejs npm >/dev/null </dev/null
  else
    say "npm not found; install Node.js and npm, then run this script again"
    exit 1
  fi
fi

npm_quiet() {
  npm install --no-audit --no-fund --no-update-notifier --loglevel=error "$@" </dev/null >/dev/null
}

if ! node_ok; then
  say "installing Node $NODE_MAJOR into $NODE_DIR"
  mkdir -p "$NODE_DIR"
  npm_quiet --prefix "$NODE_DIR" "node@$NODE_MAJOR"
  node_ok || { say "Node $NODE_MAJOR did not install ($NODE_BIN)"; exit 1; }
fi

if ! inspector_ok; then
  say "installing @modelcontextprotocol/inspector@$INSPECTOR_VERSION into $INSPECTOR_DIR"
  mkdir -p "$INSPECTOR_DIR"
  # Run the system npm under Node 22 so the Inspector's engines check (>= 22.19) passes.
  PATH="$PWD/$NODE_DIR/node_modules/node/bin:$PATH" \
    npm_quiet --prefix "$INSPECTOR_DIR" "@modelcontextprotocol/inspector@$INSPECTOR_VERSION"
  inspector_ok || { say "the Inspector did not install ($INSPECTOR_BIN)"; exit 1; }
fi

if ! conformance_ok; then
  say "installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION into $CONFORMANCE_DIR"
  mkdir -p "$CONFORMANCE_DIR"
  PATH="$PWD/$NODE_DIR/node_modules/node/bin:$PATH" \
    npm_quiet --prefix "$CONFORMANCE_DIR" "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
  conformance_ok || { say "the conformance suite did not install ($CONFORMANCE_BIN)"; exit 1; }
fi
say "ready ($("$NODE_BIN" --version), inspector $INSPECTOR_VERSION," \
  "conformance $CONFORMANCE_VERSION)"
