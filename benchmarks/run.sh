#!/usr/bin/env bash
# Run every benchmark and write benchmarks/results/ (snapshot_size.md, agent_tasks.{md,json},
# multisession.{md,json,png}, scale.{md,json}, capacity.{md,json}, ...). The capacity benchmark
# (benchmarks.capacity, issue 33: 200 sessions in one server, and how many @playwright/mcp servers
# the same memory holds, up to 12 GiB of them) always runs with the headless shell.
#
#   bash benchmarks/run.sh            # about 35-45 minutes on 2 cores (both binaries)
#   bash benchmarks/run.sh --binary headless-shell   # one binary only (multisession and scale)
#   bash benchmarks/run.sh --repeat 1 # extra arguments go to benchmarks.multisession
#
# Needs the project's .venv (bash scripts/run.sh or scripts/test.sh creates it), Node + npm, the
# full Chromium at /usr/bin/chromium and the headless shell at /usr/bin/chromium-headless-shell
# (Debian's chromium-headless-shell; BENCH_CHROMIUM=<path> makes every benchmark use one binary).
# Installs, when missing:
#   - @playwright/mcp (the peer) with npm into .tools/peer (git-ignored; BENCH_PEER_DIR overrides);
#   - matplotlib into .venv, for the plot, and py-spy, to profile the server when a target is
#     missed (benchmark-only dependencies, not in pyproject.toml);
#   - Django, the application of benchmarks.agent_tasks (in the dev extra; installed here when
#     the .venv was made without it).
# Set BENCH_NICE=-10 (root only) to give the benchmark priority on a machine shared with other work.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=.venv/bin/python
PEER_VERSION=0.0.83
PEER_DIR=${BENCH_PEER_DIR:-.tools/peer}
say() { echo "benchmarks: $*" >&2; }

[ -x "$PY" ] || { say "no .venv; run: bash scripts/run.sh (or scripts/test.sh) first"; exit 1; }

peer_pkg=$PEER_DIR/node_modules/@playwright/mcp/package.json
peer_version() { node -p "require(require('path').resolve(process.argv[1])).version" "$peer_pkg"; }
if [ ! -f "$peer_pkg" ] || [ "$(peer_version 2>/dev/null)" != "$PEER_VERSION" ]; then
  say "installing @playwright/mcp@$PEER_VERSION into $PEER_DIR"
  mkdir -p "$PEER_DIR"
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$PEER_DIR" --no-audit --no-fund \
    --no-update-notifier --loglevel=error "@playwright/mcp@$PEER_VERSION" </dev/null >/dev/null
fi

if [ ! -x /usr/bin/chromium-headless-shell ] && [ -z "${BENCH_CHROMIUM:-}" ] \
  && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  say "installing Debian's chromium-headless-shell (the second binary measured)"
  apt-get install -y -q chromium-headless-shell >/dev/null \
    || say "chromium-headless-shell did not install: pass --binary chromium"
fi
if ! "$PY" -c "import matplotlib" 2>/dev/null; then
  say "installing matplotlib into .venv (benchmark-only)"
  "$PY" -m pip install --quiet matplotlib
fi
if ! "$PY" -c "import django" 2>/dev/null; then
  say "installing Django into .venv (the agent-task benchmark's application)"
  "$PY" -m pip install --quiet "Django>=5,<6"
fi
if [ ! -x .venv/bin/py-spy ]; then
  say "installing py-spy into .venv (profiling-only)"
  "$PY" -m pip install --quiet py-spy || say "py-spy did not install: no profile on a missed target"
fi

nice_args=()
if [ -n "${BENCH_NICE:-}" ]; then
  nice_args=(--nice "$BENCH_NICE")
fi
exec "$PY" -m benchmarks.run "${nice_args[@]}" "$@"
