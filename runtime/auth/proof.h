//===- proof.h - What each side of the handshake signs -----------*- C++
//-*-===//
//
// Both proofs cover the same transcript: a label, the role of the side that
// proves, the user the client claims and both nonces. The server's nonce is
// fresh for every connection, so a recorded proof answers no other
// handshake (replays are refused); the role keeps one side's proof from
// serving as the other's.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "auth/key_file.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ompdpu::auth {

enum class Role : uint8_t { Server = 'S', Client = 'C' };

/// The bytes a side proves it saw.
std::vector<uint8_t> transcript(Role R, const std::string &User,
                                const std::vector<uint8_t> &ClientNonce,
                                const std::vector<uint8_t> &ServerNonce);

/// A new random nonce (protocol::kNonceBytes).
std::vector<uint8_t> freshNonce();

/// HMAC-SHA256 of the transcript under the key.
std::vector<uint8_t> keyProof(const Key &K, const std::vector<uint8_t> &T);

/// Whether Proof is the key's HMAC of the transcript (constant time).
bool keyProofMatches(const Key &K, const std::vector<uint8_t> &T,
                     const std::vector<uint8_t> &Proof);

} // namespace ompdpu::auth
