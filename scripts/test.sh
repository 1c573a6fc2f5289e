#!/usr/bin/env bash
# The one test command: set up, build, run every C++ (CTest) and Python (pytest) test.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
scripts/build.sh
echo "== C++ tests (ctest)"
ctest --preset default
echo "== Python tests (pytest)"
# The Slurm tests submit to a local single-node cluster, stopped when the tests end however they end.
# Where it cannot start they skip, and -rs prints why.
if slurm=$(scripts/slurm_local.sh start); then
  trap 'scripts/slurm_local.sh stop' EXIT
  eval "${slurm##*$'\n'}"  # export SLURM_CONF=...
else
  echo "== no local Slurm cluster: the Slurm tests will skip"
fi
.venv/bin/python -m pytest -rs tests/python
