//===- authenticator.h - Who a client is, proved before its session -*- C++
//-*-===//
//
// The supervisor answers a Hello with a challenge (its nonce and its own
// proof) and starts a session only for a client whose proof over both nonces
// holds: an HMAC under a key file the server was given, or a MUNGE
// credential. See PROTOCOL.md, "Authentication".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "auth/key_file.h"
#include "common/status.h"
#include "protocol/messages.h"

#include <string>
#include <sys/types.h>
#include <vector>

namespace ompdpu::server {

/// The user a client proved to be.
struct Identity {
  uid_t Uid = 0;
  gid_t Gid = 0;
  std::string Method; ///< "key /etc/ompdpu/key", "MUNGE", "none (--insecure)"
};

/// A handshake between its challenge and the client's proof.
struct PendingAuth {
  protocol::AuthMethod Method = protocol::AuthMethod::None;
  std::string User;
  std::vector<uint8_t> ClientNonce;
  std::vector<uint8_t> ServerNonce;
  /// The user's key; null after a Key challenge: answered with the decoy,
  /// refused like a wrong key.
  const auth::Key *UsedKey = nullptr;
};

class Authenticator {
public:
  /// Keys (each stands for its file's owner) and MUNGE (Socket "": the
  /// default); Insecure: clients that send no proof are served as the
  /// server's own user.
  static Expected<Authenticator> create(const std::vector<std::string> &Keys,
                                        bool Munge,
                                        const std::string &MungeSocket,
                                        bool Insecure);

  /// Whether any client may skip authentication.
  bool insecure() const { return Insecure; }
  /// What the server accepts, for its log ("key file /k (root), MUNGE").
  std::string describe() const;

  /// The challenge that answers Hi, and the handshake's state; an
  /// ErrorCode::Auth error when the server cannot authenticate this client.
  Expected<protocol::AuthChallenge> challenge(const protocol::Hello &Hi,
                                              PendingAuth &State) const;
  /// Who the proof shows the client to be (ErrorCode::Auth if no one).
  Expected<Identity> verify(const PendingAuth &State,
                            const protocol::AuthProof &Proof) const;
  /// The identity of a client that sent no proof to an --insecure server.
  Identity unauthenticated() const;

private:
  const auth::Key *keyOf(const std::string &User) const;

  std::vector<auth::Key> Keys;
  /// A random key no one holds: the challenge for a user without a key, so
  /// that clients cannot tell which users have keys here.
  auth::Key Decoy;
  bool Munge = false;
  std::string MungeSocket;
  bool Insecure = false;
};

} // namespace ompdpu::server
