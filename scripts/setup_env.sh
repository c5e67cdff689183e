# Sourced by the other scripts: a Python venv with what the build and tests need, and the compilers.
# Works offline where the packages are already installed system-wide (the venv sees system packages).
set -euo pipefail
HOPGEMM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# A host compiler that links libstdc++ dynamically: a Python extension built with a static-libstdc++
# wrapper crashes when loaded next to torch.
if [ -x /usr/bin/g++ ] && [ -x /usr/bin/gcc ]; then export CXX=/usr/bin/g++ CC=/usr/bin/gcc; fi
if [ -z "${CUDACXX:-}" ] && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
# An already active virtual environment that has the build packages (as on the GPU machine, offline) is
# used as it is; otherwise a venv that also sees the system packages.
if python3 -c "import sys, nanobind, scikit_build_core, numpy, pytest; sys.exit(sys.prefix == sys.base_prefix)" 2>/dev/null; then
  PYTHON="$(command -v python3)"
else
  VENV="${HOPGEMM_VENV:-$HOPGEMM_ROOT/.venv}"
  if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv --system-site-packages "$VENV"
  fi
  # shellcheck disable=SC1091
  source "$VENV/bin/activate"
  PYTHON="$VENV/bin/python"
fi
missing=()
for pkg in nanobind:nanobind scikit_build_core:scikit-build-core numpy:numpy pytest:pytest ml_dtypes:ml_dtypes; do
  "$PYTHON" -c "import ${pkg%%:*}" 2>/dev/null || missing+=("${pkg##*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}"
  "$PYTHON" -m pip install -q "${missing[@]}"
fi
GENERATOR=()
if command -v ninja >/dev/null; then GENERATOR=(-G Ninja); fi
JOBS="$(nproc)"
BUILD_DIR="${HOPGEMM_BUILD_DIR:-$HOPGEMM_ROOT/build}"

# Configures $BUILD_DIR and builds only the `hopgemm` CLI (what the device-side tuning and profiling scripts
# need); the build log goes to $1, its tail to the terminal on failure.
build_cli() {
  cmake -S "$HOPGEMM_ROOT" -B "$BUILD_DIR" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build "$BUILD_DIR" -j"$JOBS" --target hopgemm_cli > "$1" 2>&1 || { tail -30 "$1"; return 1; }
}
