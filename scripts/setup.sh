#!/usr/bin/env bash
# Installs what svqa needs to build and test: Debian packages and the repo's .venv.
# Idempotent: a second run checks and does nothing.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

apt_packages=(
  build-essential cmake ninja-build ccache pkg-config git
  python3-venv python3-dev
  libyaml-cpp-dev libcxxopts-dev nlohmann-json3-dev catch2
  libsentencepiece-dev libpcre2-dev libutf8proc-dev libcurl4-openssl-dev
  libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev libopencv-videoio-dev
  libavformat-dev libavcodec-dev libavutil-dev libswscale-dev
  libjemalloc-dev
  # pdflatex + booktabs: the tests compile svqa report's LaTeX table (48 MB download, 144 MiB, ~30 s)
  texlive-latex-base texlive-latex-recommended
  # the Slurm tests' single-node cluster (scripts/slurm_local.sh; its services are not started here)
  slurmctld slurmd slurm-client munge
)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

venv="$root/.venv"
stamp="$venv/.requirements.sha256"
want=$(cat "$root/requirements.txt" "$root/requirements-hf-vision.txt" | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: creating Python environment in .venv"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q -r "$root/requirements.txt"
  # Kept off .venv's path: see requirements-hf-vision.txt.
  "$venv/bin/python" -m pip install -q --no-deps --upgrade --target "$venv/hf-vision" -r "$root/requirements-hf-vision.txt"
  echo "$want" > "$stamp"
fi
