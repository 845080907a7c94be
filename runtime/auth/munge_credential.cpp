//===- munge_credential.cpp - MUNGE credentials over a payload ------------===//
#include "auth/munge_credential.h"

#include "common/log.h"

#include <cstdlib>
#include <munge.h>

namespace ompdpu::auth {
namespace {

/// A MUNGE context that talks to Socket; null (with the reason) on failure.
munge_ctx_t contextFor(const std::string &Socket, std::string &Why) {
  munge_ctx_t Ctx = munge_ctx_create();
  if (!Ctx) {
    Why = "cannot create a MUNGE context";
    return nullptr;
  }
  if (!Socket.empty() &&
      munge_ctx_set(Ctx, MUNGE_OPT_SOCKET, Socket.c_str()) != EMUNGE_SUCCESS) {
    Why = "cannot use MUNGE socket " + Socket + ": " + munge_ctx_strerror(Ctx);
    munge_ctx_destroy(Ctx);
    return nullptr;
  }
  return Ctx;
}

std::string where(const std::string &Socket) {
  return Socket.empty() ? defaultMungeSocket() : Socket;
}

} // namespace

std::string defaultMungeSocket() {
  if (const char *S = std::getenv("OMPDPU_MUNGE_SOCKET"); S && *S)
    return S;
  return "/run/munge/munge.socket.2";
}

Expected<std::string> mungeEncode(const std::string &Socket,
                                  const std::vector<uint8_t> &Payload) {
  std::string Why;
  munge_ctx_t Ctx = contextFor(where(Socket), Why);
  if (!Ctx)
    return Status::error(ErrorCode::Auth, Why);
  char *Cred = nullptr;
  munge_err_t E = munge_encode(&Cred, Ctx, Payload.data(), Payload.size());
  if (E != EMUNGE_SUCCESS) {
    std::string Msg = format("MUNGE cannot make a credential (munged at %s): "
                             "%s",
                             where(Socket).c_str(), munge_ctx_strerror(Ctx));
    munge_ctx_destroy(Ctx);
    return Status::error(ErrorCode::Auth, Msg);
  }
  std::string Out(Cred);
  std::free(Cred);
  munge_ctx_destroy(Ctx);
  return Out;
}

Expected<MungeIdentity> mungeDecode(const std::string &Socket,
                                    const std::string &Credential) {
  std::string Why;
  munge_ctx_t Ctx = contextFor(where(Socket), Why);
  if (!Ctx)
    return Status::error(ErrorCode::Auth, Why);
  void *Data = nullptr;
  int Len = 0;
  MungeIdentity Id;
  munge_err_t E =
      munge_decode(Credential.c_str(), Ctx, &Data, &Len, &Id.Uid, &Id.Gid);
  if (E != EMUNGE_SUCCESS) {
    std::string Msg =
        format("MUNGE credential refused: %s", munge_ctx_strerror(Ctx));
    munge_ctx_destroy(Ctx);
    std::free(Data);
    return Status::error(ErrorCode::Auth, Msg);
  }
  auto *P = static_cast<const uint8_t *>(Data);
  if (P && Len > 0)
    Id.Payload.assign(P, P + Len);
  std::free(Data);
  munge_ctx_destroy(Ctx);
  return Id;
}

} // namespace ompdpu::auth
