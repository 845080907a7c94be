//===- device_memory.cpp - One session's device memory --------------------===//
#include "server/device_memory.h"

#include "common/log.h"

#include <cstdlib>
#include <sys/mman.h>

namespace ompdpu::server {

namespace {
/// Transparent huge pages make large zero-copy transfers (cma copies page by
/// page) and kernels' memory accesses cheaper.
constexpr uint64_t kHugePage = 2 << 20;

/// Anonymous memory for a large allocation, 2 MiB-aligned and marked for
/// huge pages; null on failure. Freed with munmap(P, Size).
void *mapLarge(uint64_t Size) {
  uint64_t Span = Size + kHugePage;
  void *Raw = mmap(nullptr, Span, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (Raw == MAP_FAILED)
    return nullptr;
  uintptr_t Start = reinterpret_cast<uintptr_t>(Raw);
  uintptr_t Aligned = (Start + kHugePage - 1) & ~(kHugePage - 1);
  // Give back the unaligned head and the tail beyond Size.
  if (Aligned > Start)
    munmap(Raw, Aligned - Start);
  uintptr_t End = Aligned + Size, SpanEnd = Start + Span;
  uintptr_t PageEnd = (End + 4095) & ~uintptr_t(4095);
  if (SpanEnd > PageEnd)
    munmap(reinterpret_cast<void *>(PageEnd), SpanEnd - PageEnd);
  if (Size >= kHugePage)
    madvise(reinterpret_cast<void *>(Aligned), Size, MADV_HUGEPAGE);
  return reinterpret_cast<void *>(Aligned);
}
} // namespace

// The session's process ends with the session: what clients left allocated
// goes with it.
DeviceMemory::~DeviceMemory() = default;

Expected<uint64_t> DeviceMemory::allocate(uint64_t Size) {
  if (!Size)
    Size = 1;
  if (Size > Limit || bytesInUse() + Size > Limit)
    return Status::error(ErrorCode::NoMemory,
                         format("out of device memory: %lu bytes requested, "
                                "%lu of %lu in use",
                                (unsigned long)Size,
                                (unsigned long)bytesInUse(),
                                (unsigned long)Limit));
  void *P = nullptr;
  if (Size >= kMmapThreshold)
    P = mapLarge(Size);
  else if (posix_memalign(&P, 64, Size) != 0)
    P = nullptr;
  if (!P)
    return Status::error(
        ErrorCode::NoMemory,
        format("the DPU's operating system has no %lu bytes for this session "
               "(its memory, or the server's --address-space per session)",
               (unsigned long)Size));
  uint64_t Ptr = reinterpret_cast<uint64_t>(P);
  if (Status S = Table.insert(Ptr, Size); !S.ok()) {
    // Fresh memory cannot overlap a live range unless the table is wrong.
    if (Size >= kMmapThreshold)
      munmap(P, Size);
    else
      std::free(P);
    return Status::error(ErrorCode::Internal, S.message());
  }
  return Ptr;
}

Status DeviceMemory::release(uint64_t Ptr) {
  auto Size = Table.erase(Ptr);
  if (!Size)
    return Status::error(ErrorCode::NotFound,
                         "cannot free: " + Size.status().message());
  void *P = reinterpret_cast<void *>(Ptr);
  if (*Size >= kMmapThreshold)
    munmap(P, *Size);
  else
    std::free(P);
  return Status();
}

} // namespace ompdpu::server
