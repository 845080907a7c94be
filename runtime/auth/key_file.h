//===- key_file.h - The shared key a client and a server prove ---*- C++
//-*-===//
//
// A key file holds 32 random bytes as hex ("ompdpu-key-v1 <64 hex digits>").
// It stands for its owner: a server that accepts the key runs the sessions
// it starts as the file's owner. Files that others may read are refused.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/status.h"

#include <array>
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace ompdpu::auth {

constexpr size_t kKeyBytes = 32;

struct Key {
  std::array<uint8_t, kKeyBytes> Bytes{};
  uid_t Owner = 0;  ///< the file's owner: the user the key stands for
  std::string Path; ///< where it was read, for messages
};

/// Write a new random key to Path (mode 0600); refuses to replace a file
/// unless Replace (then the old one goes only once the new one is written).
Status createKeyFile(const std::string &Path, bool Replace = false);

/// The key in a key file's text (ErrorCode::Auth if it is not one; Path
/// only names it in the message).
Expected<std::array<uint8_t, kKeyBytes>>
parseKeyText(const char *Text, size_t Len, const std::string &Path);

/// Read and check a key file: a regular file, not a symbolic link, that no
/// one but its owner may read or write, in the format above.
Expected<Key> loadKeyFile(const std::string &Path);

} // namespace ompdpu::auth
