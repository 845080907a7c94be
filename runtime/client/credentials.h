//===- credentials.h - How this client proves who it is ----------*- C++
//-*-===//
#pragma once

#include "auth/key_file.h"
#include "common/config.h"
#include "common/status.h"
#include "protocol/messages.h"

#include <optional>
#include <string>

namespace ompdpu::client {

/// What the client authenticates with (OMPDPU_AUTH, OMPDPU_KEY,
/// OMPDPU_MUNGE_SOCKET).
struct Credentials {
  protocol::AuthMethod Method = protocol::AuthMethod::None;
  std::optional<auth::Key> Key;
  std::string User; ///< Key: whose key it is (the file's owner)
  std::string MungeSocket;
};

/// The credentials the configuration names; a clear error when a named
/// key is missing or unsafe, or MUNGE was asked for and is not there.
Expected<Credentials> loadCredentials(const ClientConfig &Cfg);

/// Put the method, user and a fresh nonce into Hi.
void introduce(const Credentials &C, protocol::Hello &Hi);

/// Check the server's proof and make the client's (ErrorCode::Auth when the
/// server does not prove that it holds the key or a MUNGE credential).
Expected<protocol::AuthProof>
answerChallenge(const Credentials &C, const protocol::Hello &Hi,
                const protocol::AuthChallenge &Ch);

} // namespace ompdpu::client
