#include "util/memory.hpp"

#include <cstdint>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace coldgate::util {

void advise_huge_pages(const void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t k_huge = std::uintptr_t{2} << 20;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + k_huge - 1) & ~(k_huge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(k_huge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace coldgate::util
