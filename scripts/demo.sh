#!/usr/bin/env bash
# The main job: set up, build, and run the demo experiment.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
scripts/build.sh
# The streaming runner and the tiny backbone arrive with the backbone and ReKV issues;
# until then the demo resolves and validates the experiment and prints the resolved config.
build/bin/svqa validate experiments/demo.yaml
build/bin/svqa validate experiments/demo.yaml --dump
