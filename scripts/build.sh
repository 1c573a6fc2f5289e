#!/usr/bin/env bash
# Set-up (idempotent) + configure + build with the default preset. Extra args go to cmake --build.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
scripts/setup.sh
[ -f build/build.ninja ] || cmake --preset default
cmake --build --preset default "$@"
