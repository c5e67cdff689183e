# Install rules: libhopgemm, the public and device headers (the JIT compiles the device headers at run time and the
# installed library finds them beside itself, <prefix>/include), the CLI, a CMake package (find_package(hopgemm):
# target hopgemm::hopgemm with C++20, the include directories and the CUDA runtime) and a pkg-config file.
include(CMakePackageConfigHelpers)

set(HOPGEMM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/hopgemm)

install(TARGETS hopgemm EXPORT hopgemmTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/hopgemm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET hopgemm_cli)
  install(TARGETS hopgemm_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT hopgemmTargets NAMESPACE hopgemm:: DESTINATION ${HOPGEMM_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/hopgemmConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/hopgemmConfig.cmake INSTALL_DESTINATION ${HOPGEMM_CMAKE_DIR})
# 0.x: a minor version may change the API.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/hopgemmConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/hopgemmConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/hopgemmConfigVersion.cmake
  DESTINATION ${HOPGEMM_CMAKE_DIR})

# pkg-config: paths relative to the .pc file, so the installation may be moved (or installed with --prefix).
list(JOIN CUDAToolkit_INCLUDE_DIRS " -I" HOPGEMM_PC_CUDA_CFLAGS)
set(HOPGEMM_PC_CUDA_CFLAGS "-I${HOPGEMM_PC_CUDA_CFLAGS}")
file(RELATIVE_PATH HOPGEMM_PC_PREFIX_FROM_PCDIR
  "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" HOPGEMM_PC_PREFIX_FROM_PCDIR "${HOPGEMM_PC_PREFIX_FROM_PCDIR}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/hopgemm.pc.in ${CMAKE_CURRENT_BINARY_DIR}/hopgemm.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/hopgemm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
