#!/usr/bin/env bash
# The one test command: set up, build, run every C++ (CTest) and Python (pytest) test.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
scripts/build.sh
echo "== C++ tests (ctest)"
ctest --preset default
echo "== Python tests (pytest)"
.venv/bin/python -m pytest tests/python
