//===- munge_credential.h - MUNGE credentials over a payload -----*- C++
//-*-===//
//
// MUNGE (the credential service Slurm uses) tells the decoder the uid and gid
// of the process that encoded a credential; munged refuses a credential it
// has decoded before, and one older than its time to live.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/status.h"

#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ompdpu::auth {

/// munged's socket when none is named.
std::string defaultMungeSocket();

struct MungeIdentity {
  uid_t Uid = 0;
  gid_t Gid = 0;
  std::vector<uint8_t> Payload;
};

/// A credential over Payload from the munged at Socket ("": the default).
Expected<std::string> mungeEncode(const std::string &Socket,
                                  const std::vector<uint8_t> &Payload);

/// Who made the credential and what it covers (ErrorCode::Auth when it is
/// invalid, replayed or expired).
Expected<MungeIdentity> mungeDecode(const std::string &Socket,
                                    const std::string &Credential);

} // namespace ompdpu::auth
