#!/usr/bin/env bash
# The C++ package as a user takes it (CMakeLists.txt, cmake/, examples/), on a CPU-only machine:
#   install      the build tree installed into a scratch prefix;
#   find-package examples/ configured with find_package(hopgemm) against it, built and run: its warm-up compiles the
#                example's kernel with the installed library, which must find its device headers in <prefix>/include
#                without HOPGEMM_INCLUDE_DIR;
#   pkg-config   examples/fp8_gemm.cpp compiled and linked with `pkg-config --cflags --libs hopgemm` only, and run
#                (the kernel now comes from the cache);
#   subdirectory examples/ as a C++17 project that adds the source tree with add_subdirectory, GoogleTest made
#                unfindable: it configures without hopgemm's tests and the example compiles (hopgemm's target raises
#                it to C++20). The library itself is not rebuilt there (minutes on two cores): the install above
#                already built and ran the same code.
# usage: test_cpp_package.sh SOURCE_DIR BUILD_DIR WORK_DIR CXX GENERATOR
set -euo pipefail
src=$1 build=$2 work=$3 cxx=$4 generator=$5
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
export HOPGEMM_CACHE_DIR=$work/cache
unset HOPGEMM_INCLUDE_DIR
fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== install into $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in include/hopgemm/hopgemm.hpp include/hopgemm/device lib/cmake/hopgemm/hopgemmConfig.cmake \
         lib/cmake/hopgemm/hopgemmTargets.cmake lib/pkgconfig/hopgemm.pc bin/hopgemm; do
  [ -e "$prefix/$f" ] || fail "the installation lacks $f"
done
ls "$prefix"/lib/libhopgemm.so* >/dev/null || fail "the installation lacks libhopgemm.so"

echo "== examples/ with find_package(hopgemm)"
cmake -S "$src/examples" -B "$work/find" -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/find.log" 2>&1 || { cat "$work/find.log"; fail "configure"; }
cmake --build "$work/find" >>"$work/find.log" 2>&1 || { cat "$work/find.log"; fail "build"; }
HOPGEMM_JIT_PRINT_COMPILER_COMMAND=1 "$work/find/fp8_gemm" >"$work/run1.log" 2>&1 || { cat "$work/run1.log"; fail "run"; }
cat "$work/run1.log" | grep -v "NVRTC options"
grep -q "NVRTC options:.* -I$prefix/include" "$work/run1.log" ||
  fail "the installed library did not compile with its own headers ($prefix/include)"
# "warm-up: N kernels (C compiled, H from the cache ...": the GEMM's kernel, and the quantisers' where a GPU is present.
warmup_counts() { sed -nE 's/^warm-up: ([0-9]+) kernels \(([0-9]+) compiled, ([0-9]+) from the cache.*/\1 \2 \3/p' "$1"; }
read -r kernels compiled cached <<<"$(warmup_counts "$work/run1.log")"
[ "${kernels:-0}" -ge 1 ] && [ "$compiled" = "$kernels" ] || fail "the example's warm-up did not compile its kernels"

echo "== examples/fp8_gemm.cpp with pkg-config"
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs hopgemm)
echo "pkg-config: $flags"
"$cxx" "$src/examples/fp8_gemm.cpp" $flags -o "$work/fp8_gemm_pc"
"$work/fp8_gemm_pc" >"$work/run2.log" 2>&1 || { cat "$work/run2.log"; fail "run (pkg-config build)"; }
cat "$work/run2.log"
read -r kernels2 compiled2 cached2 <<<"$(warmup_counts "$work/run2.log")"
[ "$kernels2" = "$kernels" ] && [ "$compiled2" = 0 ] && [ "$cached2" = "$kernels" ] || fail "the second run compiled again"

echo "== examples/ as a C++17 project with add_subdirectory(hopgemm), no GoogleTest"
cmake -S "$src/examples" -B "$work/subdir" -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release \
  -DHOPGEMM_SOURCE_DIR="$src" -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON >"$work/subdir.log" 2>&1 ||
  { cat "$work/subdir.log"; fail "configure with add_subdirectory"; }
[ ! -e "$work/subdir/hopgemm/tests" ] || fail "add_subdirectory configured hopgemm's tests"
grep -q "fp8_gemm" "$work/subdir/CMakeFiles/TargetDirectories.txt" || fail "no fp8_gemm target"
object=fp8_gemm.cpp.o  # Makefiles name the object by its file, Ninja by its path
[ "$generator" = Ninja ] && object=CMakeFiles/fp8_gemm.dir/fp8_gemm.cpp.o
cmake --build "$work/subdir" --target "$object" >>"$work/subdir.log" 2>&1 ||
  { cat "$work/subdir.log"; fail "the example does not compile as part of a C++17 project"; }
echo "PASS"
