#pragma once

#include <cstddef>

namespace coldgate::util {

/// Asks the kernel to back [data, data + bytes) with transparent huge pages where it can (Linux
/// madvise(MADV_HUGEPAGE) on the 2 MiB-aligned interior; a no-op elsewhere): a multi-MB buffer
/// then takes hundreds of times fewer page faults, which cost ~14 µs each on a virtualized host.
void advise_huge_pages(const void* data, std::size_t bytes);

}  // namespace coldgate::util
