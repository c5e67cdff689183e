# Sourced by the other scripts: everything they need on a fresh machine of the documented kind (Linux x86-64 with
# the CUDA toolkit). What is missing is installed where it can be (pip into the venv; apt-get as root); otherwise
# the script stops at once with the command that would install it. Works offline where everything is installed
# already (the venv sees the system's packages).
set -euo pipefail
HOPGEMM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

setup_error() {
  echo "hopgemm setup: $*" >&2
  exit 1
}

# apt-get install of Debian/Ubuntu packages when running as root; otherwise stop with the command.
apt_install() {
  local what=$1
  shift
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    setup_error "$what is missing; install it with: sudo apt-get install -y $*"
  fi
  echo "hopgemm setup: installing $* ($what)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null; } ||
    setup_error "$what is missing and 'apt-get install -y $*' failed"
}

# A host compiler that links libstdc++ dynamically: a Python extension built with a static-libstdc++
# wrapper crashes when loaded next to torch.
if [ -x /usr/bin/g++ ] && [ -x /usr/bin/gcc ]; then export CXX=/usr/bin/g++ CC=/usr/bin/gcc; fi
if ! command -v "${CXX:-g++}" >/dev/null; then apt_install "a C++20 compiler (g++ >= 12)" g++; fi
if [ -z "${CUDACXX:-}" ] && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null; then
  setup_error "the CUDA toolkit (>= 12.8: NVRTC, cudart, cuBLASLt) is not in /usr/local/cuda or on PATH; install it" \
    "from NVIDIA's repository (e.g. apt-get install -y cuda-toolkit-13-0) or put its bin/ on PATH"
fi

# An already active virtual environment that has the build packages (as on the GPU machine, offline) is used as
# it is; otherwise a venv that also sees the system packages.
if python3 -c "import sys, nanobind, scikit_build_core, numpy, pytest; sys.exit(sys.prefix == sys.base_prefix)" 2>/dev/null; then
  PYTHON="$(command -v python3)"
else
  VENV="${HOPGEMM_VENV:-$HOPGEMM_ROOT/.venv}"
  if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv --system-site-packages "$VENV" ||
      setup_error "cannot create a Python venv in $VENV; install it with: sudo apt-get install -y python3-venv"
  fi
  # shellcheck disable=SC1091
  source "$VENV/bin/activate"
  PYTHON="$VENV/bin/python"
fi
# Where the scripts put the `hopgemm` command: the environment's bin/, on PATH once it is activated.
HOPGEMM_BIN_DIR="$("$PYTHON" -c 'import sys, os; print(os.path.join(sys.prefix, "bin"))')"

# pip_ensure MODULE:PACKAGE...: installs the packages whose module does not import.
pip_ensure() {
  local missing=() pkg
  for pkg in "$@"; do
    "$PYTHON" -c "import ${pkg%%:*}" 2>/dev/null || missing+=("${pkg#*:}")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "hopgemm setup: installing ${missing[*]}"
  "$PYTHON" -m pip install -q "${missing[@]}" ||
    setup_error "could not install ${missing[*]}; run: $PYTHON -m pip install ${missing[*]}"
}
pip_ensure nanobind:nanobind scikit_build_core:scikit-build-core numpy:numpy pytest:pytest ml_dtypes:ml_dtypes
# nvdisasm for the SASS checks (tests/python/test_uniform_datapath.py): the toolkit's where it has one, else the wheel's.
if ! command -v nvdisasm >/dev/null && [ -z "${NVDISASM:-}" ] &&
   ! "$PYTHON" -c 'import glob, sys; sys.exit(not any(glob.glob(p + "/nvidia/cu*/bin/nvdisasm") for p in sys.path if p))'; then
  echo "hopgemm setup: installing nvidia-cuda-nvdisasm"
  "$PYTHON" -m pip install -q nvidia-cuda-nvdisasm ||
    setup_error "could not install nvidia-cuda-nvdisasm; run: $PYTHON -m pip install nvidia-cuda-nvdisasm"
fi
cmake_ok() { command -v cmake >/dev/null && printf '3.25\n%s\n' "$(cmake --version | sed -n 's/^cmake version //p')" | sort -V -C; }
if ! cmake_ok; then
  echo "hopgemm setup: installing cmake >= 3.25 (pip)"
  "$PYTHON" -m pip install -q "cmake>=3.25" || setup_error "CMake >= 3.25 is missing; run: $PYTHON -m pip install 'cmake>=3.25'"
fi

GENERATOR=()
if command -v ninja >/dev/null; then GENERATOR=(-G Ninja); fi
JOBS="$(nproc)"
BUILD_DIR="${HOPGEMM_BUILD_DIR:-$HOPGEMM_ROOT/build}"

# GoogleTest, for the C++ tests (build.sh, test.sh). A prefix of your own goes through GTest_DIR or CMAKE_PREFIX_PATH.
ensure_gtest() {
  [ -n "${GTest_DIR:-}${CMAKE_PREFIX_PATH:-}" ] && return 0
  local dir
  for dir in /usr/lib/*/cmake/GTest /usr/lib/cmake/GTest /usr/local/lib/cmake/GTest /usr/local/lib64/cmake/GTest \
             /usr/lib64/cmake/GTest; do
    [ -f "$dir/GTestConfig.cmake" ] && return 0
  done
  apt_install "GoogleTest (for the C++ tests)" libgtest-dev
}

# torch, for the tests that use it (test.sh): PyPI's x86-64 torch is the CUDA build, about 3 GB with its NVIDIA
# libraries and a few minutes to install. HOPGEMM_TORCH=0 skips it (those tests then skip, saying why).
ensure_torch() {
  [ "${HOPGEMM_TORCH:-1}" = 0 ] && return 0
  "$PYTHON" -c "import torch" 2>/dev/null && return 0
  echo "hopgemm setup: installing torch (about 3 GB from PyPI, a few minutes; HOPGEMM_TORCH=0 skips it)"
  "$PYTHON" -m pip install -q torch ||
    setup_error "could not install torch; run: $PYTHON -m pip install torch (or set HOPGEMM_TORCH=0)"
}

# Configures $BUILD_DIR with the C++ tests when $1 is ON; a build directory that has them keeps them (flipping the
# option would only regenerate the build files, but there is no reason to).
configure() {
  local tests=$1
  if grep -q '^HOPGEMM_BUILD_TESTS:BOOL=ON' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null; then tests=ON; fi
  [ "$tests" = ON ] && ensure_gtest
  cmake -S "$HOPGEMM_ROOT" -B "$BUILD_DIR" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DHOPGEMM_BUILD_TESTS="$tests" \
    >/dev/null
}

# Puts the built `hopgemm` command into the environment's bin/ (a link to $BUILD_DIR/hopgemm).
link_cli() {
  mkdir -p "$HOPGEMM_BIN_DIR"
  ln -sfn "$BUILD_DIR/hopgemm" "$HOPGEMM_BIN_DIR/hopgemm"
}

# Configures $BUILD_DIR and builds only the `hopgemm` CLI (what bench.sh and the device-side tuning and profiling
# scripts need); the build log goes to $1, its tail to the terminal on failure.
build_cli() {
  configure OFF &&
    cmake --build "$BUILD_DIR" -j"$JOBS" --target hopgemm_cli > "$1" 2>&1 || { tail -30 "$1"; return 1; }
  link_cli
}

# Builds the Python package as a wheel into $BUILD_DIR/wheel (the tests install it into a fresh venv too) and installs
# it into the environment: the `hopgemm` package and its `hopgemm` command (the wheel's console script). The log goes
# to $1, its tail to the terminal on failure.
install_package() {
  # A link to a build's CLI (link_cli) in its place would be written through by pip.
  if [ -L "$HOPGEMM_BIN_DIR/hopgemm" ]; then rm -f "$HOPGEMM_BIN_DIR/hopgemm"; fi
  rm -rf "$BUILD_DIR/wheel"
  { "$PYTHON" -m pip wheel -q --no-build-isolation --no-deps -C build-dir="$BUILD_DIR/python" -w "$BUILD_DIR/wheel" \
      "$HOPGEMM_ROOT" &&
    "$PYTHON" -m pip install -q --no-deps --force-reinstall "$BUILD_DIR"/wheel/hopgemm-*.whl; } > "$1" 2>&1 ||
    { tail -30 "$1"; return 1; }
}
