//===- handshake.cpp - What a client and a supervisor say first -----------===//
#include "client/handshake.h"

#include "common/config.h"
#include "common/log.h"

#include <cstdlib>
#include <unistd.h>

namespace ompdpu::client {

using namespace protocol;

Hello helloFor(const std::string &WantIsa) {
  Hello Hi;
  char Host[128] = {0};
  gethostname(Host, sizeof(Host) - 1);
  Hi.ClientName = format("%s pid %d", Host, getpid());
  Hi.Isa = WantIsa;
  Hi.BootId = bootId();
  return Hi;
}

Expected<ServerInfo> acceptHelloReply(Reader &Body) {
  HelloReply R;
  if (!decodeBody(Body, R).ok())
    return Status::error("malformed handshake reply");
  if (R.Code != kOk)
    return Status::error(errorCodeOf(R.Code), R.Message);
  if (R.SessionAddress.empty())
    return Status::error("handshake reply names no session");
  ServerInfo Info;
  Info.Isa = R.Isa;
  Info.Cores = R.Cores;
  Info.Memory = R.Memory;
  Info.Hostname = R.Hostname;
  Info.Version = R.Version;
  Info.Token = R.Token;
  Info.SessionAddress = R.SessionAddress;
  Info.SameHost = R.SameHost == 1;
  Info.OtherAccount = R.SameHost == 2;
  return Info;
}

Status explainConnectFailure(const Status &S) {
  if (S.code() == ErrorCode::NotConnected)
    return Status::error(S.code(), S.message() +
                                       " (nothing accepts connections at "
                                       "that address: is ompdpu-server "
                                       "running and listening there?)");
  // A UCX_TLS from the user's environment (HPC modules often set one) that
  // leaves no transport to the server fails as "Destination is
  // unreachable" (a server that is not there: "not connected"): say so.
  const char *Tls = std::getenv("UCX_TLS");
  if (S.ok() || !Tls || !*Tls || S.code() != ErrorCode::Unreachable)
    return S;
  return Status::error(
      S.code(), S.message() + format(" (UCX_TLS=%s is set: it may leave no UCX "
                                     "transport that reaches this server)",
                                     Tls));
}

} // namespace ompdpu::client
