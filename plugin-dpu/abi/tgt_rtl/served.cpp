//===- served.cpp - The libomptarget versions one plugin library serves ---===//
//
// Compiled into each plugin library with its own OMPDPU_ABI_FIRST and
// OMPDPU_ABI_LAST (plugin-dpu/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//
#include "adapter.h"
#include "libomptarget_probe.h"

#define OMPDPU_STR2(X) #X
#define OMPDPU_STR(X) OMPDPU_STR2(X)

namespace ompdpu::abi {
const char *const kServedVersions =
    OMPDPU_ABI_FIRST == OMPDPU_ABI_LAST
        ? OMPDPU_STR(OMPDPU_ABI_FIRST)
        : OMPDPU_STR(OMPDPU_ABI_FIRST) " and " OMPDPU_STR(OMPDPU_ABI_LAST);
bool servesLibomptarget(int Major) {
  return Major >= OMPDPU_ABI_FIRST && Major <= OMPDPU_ABI_LAST;
}
size_t implicitArguments(const void *Kernel) {
  return OMPDPU_ABI_FIRST >= 18 && !isCtorOrDtor(Kernel) ? 1 : 0;
}
} // namespace ompdpu::abi
