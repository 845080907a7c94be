//===- authenticator.cpp - Who a client is, proved before its session -----===//
#include "server/authenticator.h"

#include "auth/munge_credential.h"
#include "auth/proof.h"
#include "common/log.h"

#include <pwd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ompdpu::server {

using namespace protocol;
using auth::Role;

namespace {

std::string userName(uid_t Uid) {
  struct passwd *Pw = getpwuid(Uid);
  return Pw ? Pw->pw_name : std::to_string(Uid);
}

} // namespace

Expected<Authenticator>
Authenticator::create(const std::vector<std::string> &KeyFiles, bool Munge,
                      const std::string &MungeSocket, bool Insecure) {
  Authenticator A;
  A.Munge = Munge;
  A.MungeSocket = MungeSocket;
  A.Insecure = Insecure;
  if (getrandom(A.Decoy.Bytes.data(), A.Decoy.Bytes.size(), 0) !=
      static_cast<ssize_t>(A.Decoy.Bytes.size()))
    return Status::error(ErrorCode::Auth, "getrandom failed");
  for (const std::string &Path : KeyFiles) {
    auto K = auth::loadKeyFile(Path);
    if (!K)
      return K.status();
    // Started as a user, the server serves that user only (a key of
    // another user's would run sessions as the server's user).
    if (geteuid() != 0 && K->Owner != geteuid())
      return Status::error(
          ErrorCode::Auth,
          format("key file %s belongs to %s: a server started as %s accepts "
                 "only its own keys",
                 Path.c_str(), userName(K->Owner).c_str(),
                 userName(geteuid()).c_str()));
    for (const auth::Key &Other : A.Keys)
      if (Other.Owner == K->Owner)
        return Status::error(
            ErrorCode::Auth,
            format("key files %s and %s both stand for %s: give one",
                   Other.Path.c_str(), Path.c_str(),
                   userName(K->Owner).c_str()));
    A.Keys.push_back(std::move(*K));
  }
  std::string Socket =
      MungeSocket.empty() ? auth::defaultMungeSocket() : MungeSocket;
  if (struct stat St;
      Munge && (stat(Socket.c_str(), &St) != 0 || !S_ISSOCK(St.st_mode)))
    log(LogLevel::Warning,
        "--munge: no munged socket at %s (yet): MUNGE clients are refused "
        "until munged listens there",
        Socket.c_str());
  if (A.Keys.empty() && !Munge && !Insecure)
    return Status::error(ErrorCode::Auth,
                         "no way to authenticate clients: give --key FILE "
                         "(make one with `ompdpu key create FILE`) or "
                         "--munge, or --insecure to serve anyone who can "
                         "reach the port");
  return A;
}

std::string Authenticator::describe() const {
  std::string S;
  for (const auth::Key &K : Keys)
    S += (S.empty() ? "" : ", ") +
         format("key file %s (%s)", K.Path.c_str(), userName(K.Owner).c_str());
  if (Munge)
    S += std::string(S.empty() ? "" : ", ") + "MUNGE (" +
         (MungeSocket.empty() ? auth::defaultMungeSocket() : MungeSocket) + ")";
  if (Insecure)
    S += std::string(S.empty() ? "" : ", ") +
         "unauthenticated clients (--insecure)";
  return S;
}

const auth::Key *Authenticator::keyOf(const std::string &User) const {
  struct passwd *Pw = getpwnam(User.c_str());
  if (!Pw)
    return nullptr;
  for (const auth::Key &K : Keys)
    if (K.Owner == Pw->pw_uid)
      return &K;
  return nullptr;
}

Expected<AuthChallenge> Authenticator::challenge(const Hello &Hi,
                                                 PendingAuth &State) const {
  if (Hi.Method != AuthMethod::None && Hi.ClientNonce.size() != kNonceBytes)
    return Status::error(ErrorCode::Auth, "the client's nonce is malformed");
  State.Method = Hi.Method;
  State.User = Hi.User;
  State.ClientNonce = Hi.ClientNonce;
  State.ServerNonce = auth::freshNonce();
  AuthChallenge C;
  C.Method = Hi.Method;
  C.ServerNonce = State.ServerNonce;
  auto Mine = auth::transcript(Role::Server, Hi.User, Hi.ClientNonce,
                               State.ServerNonce);
  switch (Hi.Method) {
  case AuthMethod::None:
    return Status::error(ErrorCode::Auth,
                         "this server requires authentication: give the "
                         "client a key (OMPDPU_KEY) or use MUNGE");
  case AuthMethod::Key:
    State.UsedKey = keyOf(Hi.User);
    if (!State.UsedKey)
      log(LogLevel::Note,
          "a client asks as user '%s', who has no key on this server: it "
          "will be refused as with a wrong key",
          Hi.User.c_str());
    C.Proof = auth::keyProof(State.UsedKey ? *State.UsedKey : Decoy, Mine);
    return C;
  case AuthMethod::Munge: {
    if (!Munge)
      return Status::error(ErrorCode::Auth,
                           "this server does not accept MUNGE (no --munge)");
    auto Cred = auth::mungeEncode(MungeSocket, Mine);
    if (!Cred)
      return Status::error(ErrorCode::Auth, "the server cannot prove itself: " +
                                                Cred.status().message());
    C.Proof.assign(Cred->begin(), Cred->end());
    return C;
  }
  }
  return Status::error(ErrorCode::Auth, "unknown authentication method");
}

Expected<Identity> Authenticator::verify(const PendingAuth &State,
                                         const AuthProof &Proof) const {
  auto Theirs = auth::transcript(Role::Client, State.User, State.ClientNonce,
                                 State.ServerNonce);
  // Method Key is set by a challenge, which answered a user without a key
  // (UsedKey null) with the decoy.
  if (State.Method == AuthMethod::Key) {
    if (!State.UsedKey ||
        !auth::keyProofMatches(*State.UsedKey, Theirs, Proof.Proof))
      return Status::error(
          ErrorCode::Auth,
          format("wrong key for user '%s' (the proof does not match this "
                 "connection's challenge)",
                 State.User.c_str()));
    Identity Id;
    Id.Uid = State.UsedKey->Owner;
    struct passwd *Pw = getpwuid(Id.Uid);
    Id.Gid = Pw ? Pw->pw_gid : Id.Uid;
    Id.Method = "key file " + State.UsedKey->Path;
    return Id;
  }
  if (State.Method == AuthMethod::Munge) {
    auto Got = auth::mungeDecode(
        MungeSocket, std::string(Proof.Proof.begin(), Proof.Proof.end()));
    if (!Got)
      return Got.status();
    if (Got->Payload != Theirs)
      return Status::error(ErrorCode::Auth,
                           "the MUNGE credential is not for this connection's "
                           "challenge");
    if (geteuid() != 0 && Got->Uid != geteuid())
      return Status::error(
          ErrorCode::Auth,
          format("this server runs as %s and serves only %s, not %s",
                 userName(geteuid()).c_str(), userName(geteuid()).c_str(),
                 userName(Got->Uid).c_str()));
    Identity Id;
    Id.Uid = Got->Uid;
    Id.Gid = Got->Gid;
    Id.Method = "MUNGE";
    return Id;
  }
  return Status::error(ErrorCode::Auth, "no authentication under way");
}

Identity Authenticator::unauthenticated() const {
  Identity Id;
  Id.Uid = geteuid();
  Id.Gid = getegid();
  Id.Method = "none (--insecure)";
  return Id;
}

} // namespace ompdpu::server
