//===- pending_sockets.cpp - Connections not yet a connection request -----===//
#include "transport/pending_sockets.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cstdlib>
#include <dirent.h>
#include <netinet/in.h>
#include <unistd.h>
#include <vector>

namespace ompdpu::transport {
namespace {

/// The inode of the socket behind Fd ("socket:[N]"), 0 if it is none.
unsigned long socketInode(const char *FdName) {
  char Path[64], Link[64];
  snprintf(Path, sizeof(Path), "/proc/self/fd/%s", FdName);
  ssize_t N = readlink(Path, Link, sizeof(Link) - 1);
  if (N <= 8)
    return 0;
  Link[N] = 0;
  if (std::string(Link, 8) != "socket:[")
    return 0;
  return std::strtoul(Link + 8, nullptr, 10);
}

struct Waiting {
  int Fd;
  unsigned long Inode;
  std::string Source;
  PendingSockets::Clock::time_point Since;
};

/// The largest per-source share L >= 1 with sum(min(count, L)) <= Total.
size_t fairLevel(const std::map<std::string, size_t> &PerSource, size_t Total) {
  size_t Lo = 1, Hi = 1;
  for (const auto &S : PerSource)
    Hi = std::max(Hi, S.second);
  auto Fits = [&](size_t L) {
    size_t Sum = 0;
    for (const auto &S : PerSource)
      Sum += std::min(S.second, L);
    return Sum <= Total;
  };
  while (Lo < Hi) {
    size_t Mid = Lo + (Hi - Lo + 1) / 2;
    if (Fits(Mid))
      Lo = Mid;
    else
      Hi = Mid - 1;
  }
  return Lo;
}

} // namespace

uint16_t portOf(const sockaddr_storage &A) {
  if (A.ss_family == AF_INET)
    return ntohs(reinterpret_cast<const sockaddr_in &>(A).sin_port);
  if (A.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6 &>(A).sin6_port);
  return 0;
}

std::string sourceText(const sockaddr_storage &A) {
  char Buf[INET6_ADDRSTRLEN] = "?";
  if (A.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in &>(A).sin_addr, Buf,
              sizeof(Buf));
  else if (A.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 &>(A).sin6_addr,
              Buf, sizeof(Buf));
  return Buf;
}

std::string peerText(const sockaddr_storage &A) {
  return sourceText(A) + " " + std::to_string(portOf(A));
}

void PendingSockets::requested(const sockaddr_storage &Client) {
  Requested.insert(peerText(Client));
}

PendingDrops PendingSockets::sweep(Clock::time_point Now) {
  std::vector<Waiting> Found;
  std::set<std::string> Live;
  std::map<unsigned long, Clock::time_point> Seen;
  std::set<unsigned long> StillShutDown;
  if (DIR *D = opendir("/proc/self/fd")) {
    while (dirent *E = readdir(D)) {
      int Fd = std::atoi(E->d_name);
      if (E->d_name[0] == '.' || Fd == dirfd(D))
        continue;
      sockaddr_storage Local{}, Peer{};
      socklen_t LL = sizeof(Local), PL = sizeof(Peer);
      if (getsockname(Fd, reinterpret_cast<sockaddr *>(&Local), &LL) != 0 ||
          portOf(Local) != Port ||
          getpeername(Fd, reinterpret_cast<sockaddr *>(&Peer), &PL) != 0)
        continue; // not a connection accepted on our port
      std::string Who = peerText(Peer);
      Live.insert(Who);
      if (Requested.count(Who))
        continue;
      unsigned long Inode = socketInode(E->d_name);
      if (!Inode)
        continue;
      if (ShutDown.count(Inode)) {
        StillShutDown.insert(Inode);
        continue;
      }
      auto It = FirstSeen.find(Inode);
      Clock::time_point Since = It == FirstSeen.end() ? Now : It->second;
      Seen[Inode] = Since;
      Found.push_back({Fd, Inode, sourceText(Peer), Since});
    }
    closedir(D);
  }
  // Forget peers and sockets that are gone, so that both stay bounded.
  for (auto It = Requested.begin(); It != Requested.end();)
    It = Live.count(*It) ? std::next(It) : Requested.erase(It);
  FirstSeen = std::move(Seen);
  ShutDown = std::move(StillShutDown);

  PendingDrops Drops;
  auto Drop = [&](Waiting &W, size_t &Count) {
    shutdown(W.Fd, SHUT_RDWR); // UCX sees the end and frees its endpoint
    FirstSeen.erase(W.Inode);
    ShutDown.insert(W.Inode);
    W.Fd = -1;
    ++Count;
  };
  std::sort(Found.begin(), Found.end(), [](const Waiting &A, const Waiting &B) {
    return A.Since < B.Since;
  });
  for (Waiting &W : Found)
    if (Now - W.Since >= Limits.Timeout)
      Drop(W, Drops.Late);
  std::map<std::string, size_t> PerSource;
  size_t Kept = 0;
  for (Waiting &W : Found)
    if (W.Fd >= 0)
      ++PerSource[W.Source], ++Kept;
  // Oldest first, until each source is within its cap.
  for (Waiting &W : Found) {
    size_t &N = PerSource[W.Source];
    if (W.Fd >= 0 && N > Limits.PerSource) {
      Drops.Source = W.Source;
      Drop(W, Drops.OverSource);
      --N, --Kept;
    }
  }
  if (Kept <= Limits.Total)
    return Drops;
  // Over the total, the sources that hold the most give up their oldest
  // first: a lone client among many flooding addresses keeps its place.
  size_t Level = fairLevel(PerSource, Limits.Total);
  for (Waiting &W : Found) {
    size_t &N = PerSource[W.Source];
    if (W.Fd >= 0 && N > Level && Kept > Limits.Total) {
      Drop(W, Drops.OverTotal);
      --N, --Kept;
    }
  }
  for (Waiting &W : Found) // more addresses than the total: oldest first
    if (W.Fd >= 0 && Kept > Limits.Total) {
      Drop(W, Drops.OverTotal);
      --Kept;
    }
  return Drops;
}

} // namespace ompdpu::transport
