//===- credentials.cpp - How this client proves who it is -----------------===//
#include "client/credentials.h"

#include "auth/munge_credential.h"
#include "auth/proof.h"
#include "common/log.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ompdpu::client {

using namespace protocol;
using auth::Role;

namespace {

bool exists(const std::string &Path) {
  struct stat St;
  return !Path.empty() && ::stat(Path.c_str(), &St) == 0;
}

std::string ownerName(uid_t Uid) {
  struct passwd *Pw = getpwuid(Uid);
  return Pw ? Pw->pw_name : std::to_string(Uid);
}

} // namespace

Expected<Credentials> loadCredentials(const ClientConfig &Cfg) {
  Credentials C;
  C.MungeSocket =
      Cfg.MungeSocket.empty() ? auth::defaultMungeSocket() : Cfg.MungeSocket;
  std::string Mode = Cfg.Auth;
  if (Mode == "auto")
    Mode = Cfg.KeyFileGiven || exists(Cfg.KeyFile) ? "key"
           : exists(C.MungeSocket)                 ? "munge"
                                                   : "none";
  if (Mode == "key") {
    if (Cfg.KeyFile.empty())
      return Status::error(ErrorCode::Auth,
                           "OMPDPU_AUTH=key but no key file (set OMPDPU_KEY)");
    auto K = auth::loadKeyFile(Cfg.KeyFile);
    if (!K)
      return K.status();
    C.Method = AuthMethod::Key;
    C.User = ownerName(K->Owner);
    C.Key = std::move(*K);
  } else if (Mode == "munge") {
    C.Method = AuthMethod::Munge;
  }
  return C;
}

void introduce(const Credentials &C, Hello &Hi) {
  Hi.Method = C.Method;
  Hi.User = C.User;
  Hi.Uid = geteuid();
  if (C.Method != AuthMethod::None)
    Hi.ClientNonce = auth::freshNonce();
}

Expected<AuthProof> answerChallenge(const Credentials &C, const Hello &Hi,
                                    const AuthChallenge &Ch) {
  if (Ch.Method != C.Method || Ch.ServerNonce.size() != kNonceBytes)
    return Status::error(ErrorCode::Auth, "malformed authentication challenge");
  auto Server =
      auth::transcript(Role::Server, Hi.User, Hi.ClientNonce, Ch.ServerNonce);
  auto Mine =
      auth::transcript(Role::Client, Hi.User, Hi.ClientNonce, Ch.ServerNonce);
  AuthProof P;
  if (C.Method == AuthMethod::Key) {
    if (!auth::keyProofMatches(*C.Key, Server, Ch.Proof))
      return Status::error(ErrorCode::Auth,
                           format("the server does not hold key %s: it "
                                  "has another key or none for user '%s', "
                                  "or is not the server it claims to be",
                                  C.Key->Path.c_str(), Hi.User.c_str()));
    P.Proof = auth::keyProof(*C.Key, Mine);
    return P;
  }
  auto Got = auth::mungeDecode(C.MungeSocket,
                               std::string(Ch.Proof.begin(), Ch.Proof.end()));
  if (!Got)
    return Status::error(ErrorCode::Auth,
                         "the server's " + Got.status().message());
  // A server runs as root (the DPU's service) or as this user.
  if (Got->Payload != Server || (Got->Uid != 0 && Got->Uid != geteuid()))
    return Status::error(ErrorCode::Auth,
                         format("the server's MUNGE credential is not for "
                                "this connection or comes from user %s",
                                ownerName(Got->Uid).c_str()));
  auto Cred = auth::mungeEncode(C.MungeSocket, Mine);
  if (!Cred)
    return Cred.status();
  P.Proof.assign(Cred->begin(), Cred->end());
  return P;
}

} // namespace ompdpu::client
