#!/usr/bin/env bash
# The main job: set up, build, make the tiny export and the synthetic video, run the demo experiment.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
scripts/build.sh
mkdir -p build/demo
[ -f build/demo/tiny-llava_onevision/manifest.json ] ||
  .venv/bin/python -m models.export --tiny llava_onevision --seed 0 --out build/demo/tiny-llava_onevision
# The image-text expert of Mem-Stream's retrieval in experiments/compare_methods_tiny.yaml.
[ -f build/demo/tiny-pe_core/manifest.json ] ||
  .venv/bin/python -m models.export.image_text --tiny pe_core --out build/demo/tiny-pe_core
[ -f build/demo/demo.avi ] || build/bin/svqa make-video build/demo/demo.avi --seconds 130 --fps 2
build/bin/svqa run experiments/demo.yaml "$@"
