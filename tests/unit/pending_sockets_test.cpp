// PendingSockets against real loopback sockets: connections accepted on a
// port that sent no request are shut down oldest first beyond the caps and
// after the timeout; the others, and those that sent one, are left alone.
#include "transport/pending_sockets.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>
#include <vector>

using namespace ompdpu::transport;
using namespace std::chrono_literals;

namespace {

struct Listener {
  int Fd = socket(AF_INET, SOCK_STREAM, 0);
  uint16_t Port = 0;
  Listener() {
    sockaddr_in A{};
    A.sin_family = AF_INET;
    A.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t L = sizeof(A);
    EXPECT_EQ(bind(Fd, reinterpret_cast<sockaddr *>(&A), L), 0);
    EXPECT_EQ(listen(Fd, 64), 0);
    getsockname(Fd, reinterpret_cast<sockaddr *>(&A), &L);
    Port = ntohs(A.sin_port);
  }
  ~Listener() { close(Fd); }
};

/// A client connection from Source and the server's accepted end.
struct Conn {
  int Client = -1, Accepted = -1;
  sockaddr_storage ClientAddr{};
};

Conn connectFrom(const Listener &L, const char *Source) {
  Conn C;
  C.Client = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in A{};
  A.sin_family = AF_INET;
  inet_pton(AF_INET, Source, &A.sin_addr);
  EXPECT_EQ(bind(C.Client, reinterpret_cast<sockaddr *>(&A), sizeof(A)), 0);
  A.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  A.sin_port = htons(L.Port);
  EXPECT_EQ(connect(C.Client, reinterpret_cast<sockaddr *>(&A), sizeof(A)), 0);
  socklen_t Len = sizeof(C.ClientAddr);
  C.Accepted = accept(L.Fd, reinterpret_cast<sockaddr *>(&C.ClientAddr), &Len);
  EXPECT_GE(C.Accepted, 0);
  return C;
}

/// Whether the server's end was shut down: the client reads end of file.
bool shutDown(const Conn &C) {
  pollfd P{C.Client, POLLIN, 0};
  char B;
  return poll(&P, 1, 1000) == 1 && read(C.Client, &B, 1) == 0;
}

void closeAll(std::vector<Conn> &Cs) {
  for (Conn &C : Cs)
    close(C.Client), close(C.Accepted);
}

} // namespace

TEST(PendingSockets, OldestBeyondThePerSourceCapFirst) {
  Listener L;
  PendingSockets P(L.Port, {/*Total=*/100, /*PerSource=*/2, 1h});
  auto T0 = PendingSockets::Clock::now();
  std::vector<Conn> A;
  size_t Dropped[4];
  for (int K = 0; K < 4; ++K) {
    A.push_back(connectFrom(L, "127.0.0.2"));
    PendingDrops D = P.sweep(T0 + K * 1s);
    Dropped[K] = D.OverSource;
    if (D.OverSource)
      EXPECT_EQ(D.Source, "127.0.0.2");
  }
  // The third and the fourth each put the address one over its cap of 2.
  EXPECT_EQ(Dropped[0] + Dropped[1], 0u);
  EXPECT_EQ(Dropped[2], 1u);
  EXPECT_EQ(Dropped[3], 1u);
  Conn Other = connectFrom(L, "127.0.0.3");
  EXPECT_EQ(P.sweep(T0 + 10s).total(), 0u); // another address: its own cap
  EXPECT_TRUE(shutDown(A[0]));
  EXPECT_TRUE(shutDown(A[1]));
  EXPECT_EQ(P.pending(), 3u); // A[2], A[3] and Other
  A.push_back(Other);
  closeAll(A);
}

TEST(PendingSockets, TotalCapTimeoutAndRequestsLeftAlone) {
  Listener L;
  PendingSockets P(L.Port, {/*Total=*/3, /*PerSource=*/3, 30s});
  auto T0 = PendingSockets::Clock::now();
  std::vector<Conn> C;
  const char *Sources[] = {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"};
  for (int K = 0; K < 4; ++K) {
    C.push_back(connectFrom(L, Sources[K]));
    if (K == 0)
      P.requested(C[0].ClientAddr); // sent its request: never counted
    P.sweep(T0 + K * 1s);
  }
  // Three pending (1, 2, 3): within the total of 3.
  EXPECT_EQ(P.pending(), 3u);
  Conn Late = connectFrom(L, "127.0.0.6");
  PendingDrops D = P.sweep(T0 + 10s);
  EXPECT_EQ(D.OverTotal, 1u);
  EXPECT_TRUE(shutDown(C[1])); // the oldest pending one
  // After the timeout, every pending one goes; the one with a request stays.
  D = P.sweep(T0 + 45s);
  EXPECT_EQ(D.Late, 3u);
  EXPECT_TRUE(shutDown(C[2]));
  EXPECT_TRUE(shutDown(Late));
  pollfd Pf{C[0].Client, POLLIN, 0};
  EXPECT_EQ(poll(&Pf, 1, 100), 0);
  C.push_back(Late);
  closeAll(C);
}

TEST(PendingSockets, OverTheTotalTheBusiestAddressesGiveWayFirst) {
  Listener L;
  PendingSockets P(L.Port, {/*Total=*/4, /*PerSource=*/10, 1h});
  auto T0 = PendingSockets::Clock::now();
  std::vector<Conn> C;
  C.push_back(connectFrom(L, "127.0.0.9")); // the oldest, alone on its address
  P.sweep(T0);
  for (int K = 0; K < 6; ++K)
    C.push_back(connectFrom(L, "127.0.0.2"));
  PendingDrops D = P.sweep(T0 + 1s);
  EXPECT_EQ(D.OverTotal, 3u);
  pollfd Lone{C[0].Client, POLLIN, 0};
  EXPECT_EQ(poll(&Lone, 1, 100), 0); // kept, though the oldest
  for (int K = 1; K <= 3; ++K)
    EXPECT_TRUE(shutDown(C[K])) << K; // the busy address's oldest three
  EXPECT_EQ(P.pending(), 4u);
  closeAll(C);
}
