#include "hopgemm/runtime.hpp"

#ifndef HOPGEMM_VERSION
#error "HOPGEMM_VERSION must be defined (CMakeLists.txt: the project's version)"
#endif

namespace hopgemm {

const char* version() { return HOPGEMM_VERSION; }

}  // namespace hopgemm
