//===- image_loader.cpp - Load device images from memory ------------------===//
#include "server/image_loader.h"

#include "common/elf_image.h"
#include "common/log.h"
#include "common/offload_entry.h"
#include "common/source_files.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

namespace ompdpu::server {

uint16_t nativeMachine() {
#if defined(__x86_64__)
  return kMachineX86_64;
#elif defined(__aarch64__)
  return kMachineAArch64;
#else
#error "ompdpu-server supports x86_64 (emulated DPU) and aarch64 (BlueField)"
#endif
}

namespace {
bool writeAll(int Fd, const uint8_t *P, size_t N) {
  while (N) {
    ssize_t W = ::write(Fd, P, N);
    if (W < 0 && errno == EINTR)
      continue;
    if (W <= 0)
      return false;
    P += W;
    N -= W;
  }
  return true;
}
} // namespace

LoadedImage::~LoadedImage() {
  // Destroyed with its session, after the last kernel: a session process
  // ends before, an in-process session (MPI mode) must leave nothing of the
  // client behind for the next one.
  bool Resident = false;
  if (Handle) {
    dlclose(Handle);
    std::string Path = format("/proc/self/fd/%d", Fd);
    if (void *Still = dlopen(Path.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
      Resident = true; // RTLD_NODELETE or unique symbols keep it mapped
      dlclose(Still);
    }
  }
  // dlopen finds a resident object by its path: while it stays mapped, the
  // descriptor stays open so that no later image gets its path.
  if (Fd >= 0 && !Resident)
    ::close(Fd);
}

Expected<std::unique_ptr<LoadedImage>> LoadedImage::load(const uint8_t *Image,
                                                         size_t Size) {
  auto Machine = elfMachine(Image, Size);
  if (!Machine)
    return Machine.status();
  if (*Machine != nativeMachine())
    return Status::error(format("image is for %s (e_machine %u), this server "
                                "runs %s",
                                isaName(*Machine), *Machine,
                                isaName(nativeMachine())));
  auto Section = findEntrySection(Image, Size);
  if (!Section)
    return Section.status();

  std::unique_ptr<LoadedImage> L(new LoadedImage());
  static std::atomic<int> Counter{0};
  std::string Name = format("ompdpu-image-%d", Counter++);
  L->Fd = memfd_create(Name.c_str(), MFD_CLOEXEC);
  if (L->Fd < 0)
    return Status::error(format("memfd_create: %s", std::strerror(errno)));
  if (!writeAll(L->Fd, Image, Size))
    return Status::error(
        format("writing image to memfd: %s", std::strerror(errno)));
  std::string Path = format("/proc/self/fd/%d", L->Fd);
  dlerror();
  L->Handle = dlopen(Path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!L->Handle) {
    const char *E = dlerror();
    return Status::error(format("dlopen: %s", E ? E : "unknown error"));
  }
  link_map *Map = nullptr;
  if (dlinfo(L->Handle, RTLD_DI_LINKMAP, &Map) != 0 || !Map)
    return Status::error("dlinfo cannot find the image's link map");

  // clang 14 aligns the entry section to 1 byte: copy each entry out.
  auto *Begin = reinterpret_cast<const char *>(Map->l_addr + Section->Addr);
  size_t Count = Section->Size / sizeof(__tgt_offload_entry);
  std::vector<uint64_t> NameAddrs; // in the image's own addresses
  for (size_t K = 0; K < Count; ++K) {
    __tgt_offload_entry E;
    std::memcpy(&E, Begin + K * sizeof(E), sizeof(E));
    protocol::EntryInfo Info;
    Info.Addr = reinterpret_cast<uint64_t>(E.addr);
    Info.Size = E.size;
    Info.Flags = E.flags;
    if (E.name)
      Info.Name.assign(E.name, strnlen(E.name, 4096));
    NameAddrs.push_back(reinterpret_cast<uint64_t>(E.name) - Map->l_addr);
    L->Entries.push_back(std::move(Info));
  }
  L->Sources = sourceFilesAt(Image, Size, NameAddrs);
  return L;
}

} // namespace ompdpu::server
