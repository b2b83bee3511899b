#!/usr/bin/env bash
# Set up (see setup.sh) and run the product: the two-role demo through the real MCP protocol.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/browsermesh demo "$@"
