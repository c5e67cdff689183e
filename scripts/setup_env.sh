# Sourced by the other scripts: a Python venv with what the build and tests need, and the compilers.
# Works offline where the packages are already installed system-wide (the venv sees system packages).
set -euo pipefail
HOPGEMM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# A host compiler that links libstdc++ dynamically: a Python extension built with a static-libstdc++
# wrapper crashes when loaded next to torch.
if [ -x /usr/bin/g++ ] && [ -x /usr/bin/gcc ]; then export CXX=/usr/bin/g++ CC=/usr/bin/gcc; fi
if [ -z "${CUDACXX:-}" ] && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
VENV="${HOPGEMM_VENV:-$HOPGEMM_ROOT/.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv --system-site-packages "$VENV"
fi
# shellcheck disable=SC1091
source "$VENV/bin/activate"
missing=()
for pkg in nanobind:nanobind scikit_build_core:scikit-build-core numpy:numpy pytest:pytest ml_dtypes:ml_dtypes; do
  python -c "import ${pkg%%:*}" 2>/dev/null || missing+=("${pkg##*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}"
  python -m pip install -q "${missing[@]}"
fi
GENERATOR=()
if command -v ninja >/dev/null; then GENERATOR=(-G Ninja); fi
JOBS="$(nproc)"
BUILD_DIR="${HOPGEMM_BUILD_DIR:-$HOPGEMM_ROOT/build}"
