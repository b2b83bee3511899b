#!/usr/bin/env bash
# Set up a fresh clone: virtual environment, dependencies, and the browsers BrowserMesh finds.
# Idempotent; safe to run again. Prints progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  "$PY" -m venv .venv
fi
echo "setup: installing browsermesh and its dependencies" >&2
.venv/bin/python -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
.venv/bin/python -m pip install --quiet -e '.[dev]' 2>&1 | grep -v "is ignored" >&2 || true
.venv/bin/python -c "import browsermesh, playwright, mcp" >/dev/null

# The browsers: the full Chromium (headed sessions) and, beside it, the headless shell (headless
# sessions prefer it: about half the CPU and memory per page). Playwright's download is tried
# first; where it is unreachable, Debian's chromium / chromium-headless-shell packages as root.
# Nothing runs when both are found already.
.venv/bin/python -c "
import sys
from browsermesh.install_browser import ensure_browsers
sys.exit(ensure_browsers())"

# Session videos (engine/video.py) need ffmpeg, and DejaVu Sans for their captions: Debian's
# packages as root, only when videos are asked for and no ffmpeg is on PATH yet.
if [ "${BROWSERMESH_VIDEO:-}" = "1" ] && ! command -v ffmpeg >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian's ffmpeg (BROWSERMESH_VIDEO=1)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ffmpeg fonts-dejavu-core >&2
  else
    echo "setup: BROWSERMESH_VIDEO=1 needs ffmpeg: run as root apt-get install ffmpeg" >&2
  fi
fi
# The fleet's session directory (issue 37) is a Redis: its tests and the doctor's fleet-redis
# check run Debian's redis-server, installed as root only when asked for and not on PATH yet.
if [ "${BROWSERMESH_FLEET:-}" = "1" ] && ! command -v redis-server >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian's redis-server (BROWSERMESH_FLEET=1)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >&2
  else
    echo "setup: BROWSERMESH_FLEET=1 needs redis-server: run as root apt-get install redis-server" >&2
  fi
fi
echo "setup: ready" >&2
