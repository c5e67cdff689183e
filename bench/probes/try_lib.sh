# Sourced by the try_* probes, from the repository root on the GPU machine: the library built under /tmp
# (scripts/build.sh, reused while the machine stays warm) and `try_configs ARGS...`, which runs bench/try_configs.py
# from /tmp (so `import hopgemm` is the installed package, not the source tree).
export HOPGEMM_VENV=/tmp/hopgemm-venv HOPGEMM_BUILD_DIR=/tmp/hopgemm-build HOPGEMM_CACHE_DIR=/tmp/hopgemm-cache
source scripts/setup_env.sh; set +e
scripts/build.sh > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
try_configs() { (cd /tmp && "$PYTHON" "$HOPGEMM_ROOT/bench/try_configs.py" "$@"); }
