//===- image_loader.h - Load device images from memory ----------*- C++ -*-===//
#pragma once

#include "common/status.h"
#include "protocol/messages.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace ompdpu::server {

/// A device image loaded into the session with dlopen, from a memfd so that
/// each client's copy is private and nothing is written to disk.
class LoadedImage {
public:
  ~LoadedImage();
  /// The offload entries (kernels have Size 0, globals their byte size),
  /// with addresses in this process.
  const std::vector<protocol::EntryInfo> &entries() const { return Entries; }
  /// Each entry's source file where the image says ("" elsewhere).
  const std::vector<std::string> &sourceFiles() const { return Sources; }

  /// Check the image (ELF machine, entry section), load it and read its
  /// entry table. Global constructors of the image run here.
  static Expected<std::unique_ptr<LoadedImage>> load(const uint8_t *Image,
                                                     size_t Size);

private:
  LoadedImage() = default;
  void *Handle = nullptr;
  int Fd = -1;
  std::vector<protocol::EntryInfo> Entries;
  std::vector<std::string> Sources;
};

/// The e_machine of images this server can run.
uint16_t nativeMachine();

} // namespace ompdpu::server
