//===- intake.cpp - Connections until their client has proved who it is ---===//
#include "server/intake.h"

#include "common/elf_image.h"
#include "common/log.h"
#include "server/image_loader.h"

#include <algorithm>

namespace ompdpu::server {

using namespace protocol;
using transport::Peer;

void Intake::accepted(Peer P) {
  auto Now = std::chrono::steady_clock::now();
  // Connections that passed UCX's wire-up but never authenticate count
  // against --max-startups too: beyond it the oldest goes.
  if (Deadlines.size() >= Opts.MaxStartups) {
    auto Oldest = std::min_element(
        Deadlines.begin(), Deadlines.end(),
        [](const auto &A, const auto &B) { return A.second < B.second; });
    Pending.erase(Oldest->first);
    W->closePeer(Oldest->first);
    Deadlines.erase(Oldest);
    ++Crowded;
    if (Now >= NextCrowdedReport) {
      log(LogLevel::Warning,
          "closed %zu connections still in their handshake: more than %u "
          "at once (--max-startups)",
          Crowded, Opts.MaxStartups);
      Crowded = 0;
      NextCrowdedReport = Now + std::chrono::seconds(10);
    }
  }
  Deadlines[P] = Now;
}

void Intake::refuse(Peer From, const Header &H, const std::string &Client,
                    int32_t Code, const std::string &Why) {
  HelloReply Rep;
  Rep.Code = Code;
  Rep.Message = Why;
  Rep.Isa = isaName(nativeMachine());
  Header RH;
  RH.Type = MsgType::HelloReply;
  RH.RequestId = H.RequestId;
  // A plugin of another ISA asking is a probe (its devices are another
  // server's), not a fault: only with OMPDPU_DEBUG.
  if (Code == kErrIsa)
    OMPDPU_DEBUG_LOG("refused client '%s': %s", Client.c_str(), Why.c_str());
  else
    log(LogLevel::Warning, "refused client '%s': %s", Client.c_str(),
        Why.c_str());
  W->send(From, frame(RH, Rep), nullptr, 0, nullptr);
  // A refused handshake ends: a proof after it finds no challenge.
  Pending.erase(From);
}

std::optional<Admission> Intake::onHello(Peer From, const Header &H,
                                         Reader &Body, bool Served) {
  Hello Hi;
  Reader Peek = Body;
  if (!decodeBody(Body, Hi).ok()) {
    // An older or newer client's Hello: its version range comes first.
    uint16_t Min = 0, Max = 0;
    if (Peek.get(Min) && Peek.get(Max) && (Min > kVersion || Max < kVersion))
      refuse(From, H, "?", kErrVersion,
             format("protocol version mismatch: client speaks %u-%u, server "
                    "speaks %u",
                    Min, Max, kVersion));
    else
      refuse(From, H, "?", kErrInvalid, "malformed Hello");
    return std::nullopt;
  }
  if (Hi.MinVersion > kVersion || Hi.MaxVersion < kVersion) {
    refuse(From, H, Hi.ClientName, kErrVersion,
           format("protocol version mismatch: client speaks %u-%u, server "
                  "speaks %u",
                  Hi.MinVersion, Hi.MaxVersion, kVersion));
    return std::nullopt;
  }
  if (!Hi.Isa.empty() && Hi.Isa != isaName(nativeMachine())) {
    refuse(From, H, Hi.ClientName, kErrIsa,
           format("client wants %s, this server runs %s", Hi.Isa.c_str(),
                  isaName(nativeMachine())));
    return std::nullopt;
  }
  if (Served || Pending.count(From)) {
    refuse(From, H, Hi.ClientName, kErrInvalid,
           Served ? "this connection already has a session"
                  : "this connection is authenticating");
    return std::nullopt;
  }
  if (Hi.Method == AuthMethod::None && Auth.insecure())
    return Admission{From, H, Hi, Auth.unauthenticated()};
  PendingAuth State;
  auto Challenge = Auth.challenge(Hi, State);
  if (!Challenge) {
    refuse(From, H, Hi.ClientName, kErrAuth, Challenge.status().message());
    return std::nullopt;
  }
  Pending[From] = Challenged{std::move(State), Hi};
  Header RH;
  RH.Type = MsgType::AuthChallenge;
  RH.RequestId = H.RequestId;
  W->send(From, frame(RH, *Challenge), nullptr, 0, nullptr);
  return std::nullopt;
}

std::optional<Admission> Intake::onAuthProof(Peer From, const Header &H,
                                             Reader &Body) {
  auto It = Pending.find(From);
  if (It == Pending.end()) {
    refuse(From, H, "?", kErrAuth,
           "an authentication proof without a challenge");
    return std::nullopt;
  }
  Challenged C = std::move(It->second);
  Pending.erase(It); // one proof per challenge: a second one finds none
  AuthProof Proof;
  if (!decodeBody(Body, Proof).ok()) {
    refuse(From, H, C.Hi.ClientName, kErrAuth,
           "malformed authentication proof");
    return std::nullopt;
  }
  auto Id = Auth.verify(C.Auth, Proof);
  if (!Id) {
    refuse(From, H, C.Hi.ClientName, kErrAuth, Id.status().message());
    return std::nullopt;
  }
  return Admission{From, H, std::move(C.Hi), *Id};
}

void Intake::forget(Peer P) {
  Deadlines.erase(P);
  Pending.erase(P);
}

void Intake::dropLate() {
  if (Deadlines.empty())
    return;
  auto Now = std::chrono::steady_clock::now();
  for (auto It = Deadlines.begin(); It != Deadlines.end();) {
    if (std::chrono::duration<double>(Now - It->second).count() <
        Opts.HandshakeTimeout) {
      ++It;
      continue;
    }
    log(LogLevel::Note,
        "dropped a connection that did not complete its handshake within "
        "%.0f s (--handshake-timeout)",
        Opts.HandshakeTimeout);
    Pending.erase(It->first);
    W->closePeer(It->first);
    It = Deadlines.erase(It);
  }
}

} // namespace ompdpu::server
