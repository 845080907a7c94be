//===- proof.cpp - What each side of the handshake signs ------------------===//
#include "auth/proof.h"

#include "protocol/messages.h"

#include <sodium.h>

namespace ompdpu::auth {

std::vector<uint8_t> transcript(Role R, const std::string &User,
                                const std::vector<uint8_t> &ClientNonce,
                                const std::vector<uint8_t> &ServerNonce) {
  static const char Label[] = "ompdpu-auth-v1";
  std::vector<uint8_t> T(Label, Label + sizeof(Label) - 1);
  T.push_back(static_cast<uint8_t>(R));
  // Each part with its length first, so that no two (user, nonces) give
  // the same bytes.
  auto Append = [&T](const void *Data, size_t N) {
    for (int B = 0; B < 4; ++B)
      T.push_back(static_cast<uint8_t>(N >> (8 * B)));
    const auto *P = static_cast<const uint8_t *>(Data);
    T.insert(T.end(), P, P + N);
  };
  Append(User.data(), User.size());
  Append(ClientNonce.data(), ClientNonce.size());
  Append(ServerNonce.data(), ServerNonce.size());
  return T;
}

std::vector<uint8_t> freshNonce() {
  std::vector<uint8_t> N(protocol::kNonceBytes);
  if (sodium_init() < 0)
    abort(); // no randomness: nothing may be proved without it
  randombytes_buf(N.data(), N.size());
  return N;
}

std::vector<uint8_t> keyProof(const Key &K, const std::vector<uint8_t> &T) {
  std::vector<uint8_t> Mac(crypto_auth_hmacsha256_BYTES);
  crypto_auth_hmacsha256(Mac.data(), T.data(), T.size(), K.Bytes.data());
  return Mac;
}

bool keyProofMatches(const Key &K, const std::vector<uint8_t> &T,
                     const std::vector<uint8_t> &Proof) {
  return Proof.size() == crypto_auth_hmacsha256_BYTES &&
         crypto_auth_hmacsha256_verify(Proof.data(), T.data(), T.size(),
                                       K.Bytes.data()) == 0;
}

} // namespace ompdpu::auth
