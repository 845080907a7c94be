// Key files, proofs and the handshake's authentication, both sides, without
// a network: the supervisor's Authenticator against the client's
// Credentials.
#include "auth/key_file.h"
#include "auth/proof.h"
#include "client/credentials.h"
#include "server/authenticator.h"
#include "server/intake.h"
#include "transport/memory_worker.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ompdpu;
using namespace ompdpu::protocol;

namespace {

class AuthTest : public ::testing::Test {
protected:
  void SetUp() override {
    char T[] = "/tmp/ompdpu-auth-test.XXXXXX";
    ASSERT_NE(mkdtemp(T), nullptr);
    Dir = T;
  }
  void TearDown() override {
    std::string Cmd = "rm -rf '" + Dir + "'";
    ASSERT_EQ(std::system(Cmd.c_str()), 0);
  }
  std::string newKey(const std::string &Name) {
    std::string P = Dir + "/" + Name;
    EXPECT_TRUE(auth::createKeyFile(P).ok());
    return P;
  }
  client::Credentials credentials(const std::string &Key) {
    ClientConfig Cfg;
    Cfg.Auth = "key";
    Cfg.KeyFile = Key;
    auto C = client::loadCredentials(Cfg);
    EXPECT_TRUE(C) << C.status().message();
    return C ? *C : client::Credentials();
  }
  server::Authenticator serverWith(const std::string &Key) {
    auto A = server::Authenticator::create({Key}, false, "", false);
    EXPECT_TRUE(A) << A.status().message();
    return std::move(*A);
  }
  std::string Dir;
};

TEST_F(AuthTest, KeyFileIsOwnersAloneAndRoundTrips) {
  std::string P = newKey("k");
  struct stat St;
  ASSERT_EQ(stat(P.c_str(), &St), 0);
  EXPECT_EQ(St.st_mode & 0777, 0600u);
  auto K = auth::loadKeyFile(P);
  ASSERT_TRUE(K) << K.status().message();
  EXPECT_EQ(K->Owner, geteuid());
  auto Again = auth::loadKeyFile(P);
  EXPECT_EQ(Again->Bytes, K->Bytes);
  EXPECT_NE(auth::loadKeyFile(newKey("other"))->Bytes, K->Bytes);
  // Never replaced.
  EXPECT_FALSE(auth::createKeyFile(P).ok());
}

// OMPDPU_KEY naming a missing file is that error, not a quiet fall-back to
// MUNGE or to no authentication (which the server then refuses for another
// reason); a default key path that is not there is not an error.
TEST_F(AuthTest, AKeyFileGivenButMissingIsAnError) {
  ClientConfig Cfg;
  Cfg.KeyFile = Dir + "/missing";
  Cfg.KeyFileGiven = true;
  auto C = client::loadCredentials(Cfg);
  ASSERT_FALSE(C);
  EXPECT_NE(C.status().message().find("cannot open key file " + Cfg.KeyFile),
            std::string::npos)
      << C.status().message();
  Cfg.KeyFileGiven = false;
  Cfg.MungeSocket = Dir + "/no-munge";
  auto Default = client::loadCredentials(Cfg);
  ASSERT_TRUE(Default) << Default.status().message();
  EXPECT_EQ(Default->Method, protocol::AuthMethod::None);
}

TEST_F(AuthTest, UnsafeOrMalformedKeyFilesAreRefusedWithTheReason) {
  std::string P = newKey("k");
  ASSERT_EQ(chmod(P.c_str(), 0640), 0);
  auto Open = auth::loadKeyFile(P);
  ASSERT_FALSE(Open);
  EXPECT_EQ(Open.status().code(), ErrorCode::Auth);
  EXPECT_NE(Open.status().message().find("mode 0640"), std::string::npos)
      << Open.status().message();
  EXPECT_NE(Open.status().message().find("chmod 600"), std::string::npos);

  std::string L = Dir + "/link";
  ASSERT_EQ(chmod(P.c_str(), 0600), 0);
  ASSERT_EQ(symlink(P.c_str(), L.c_str()), 0);
  auto Linked = auth::loadKeyFile(L);
  ASSERT_FALSE(Linked);
  EXPECT_NE(Linked.status().message().find("is a symbolic link"),
            std::string::npos)
      << Linked.status().message();

  for (const char *Text :
       {"", "ompdpu-key-v1 abcd\n", "hello world\n",
        "ompdpu-key-v1 "
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeffff\n",
        "ompdpu-key-v1 "
        "zz112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n"}) {
    std::string Bad = Dir + "/bad";
    unlink(Bad.c_str());
    std::ofstream(Bad) << Text;
    ASSERT_EQ(chmod(Bad.c_str(), 0600), 0);
    auto K = auth::loadKeyFile(Bad);
    EXPECT_FALSE(K) << "accepted '" << Text << "'";
    if (!K)
      EXPECT_NE(K.status().message().find("not an ompdpu key file"),
                std::string::npos);
  }
  EXPECT_FALSE(auth::loadKeyFile(Dir + "/missing"));
}

TEST_F(AuthTest, AServerNeedsAWayToAuthenticateOrInsecure) {
  auto None = server::Authenticator::create({}, false, "", false);
  ASSERT_FALSE(None);
  EXPECT_NE(None.status().message().find("--insecure"), std::string::npos);
  EXPECT_TRUE(server::Authenticator::create({}, false, "", true));
  EXPECT_FALSE(
      server::Authenticator::create({Dir + "/missing"}, false, "", false));
}

TEST_F(AuthTest, TheRightKeyAuthenticatesBothSidesAsTheKeysOwner) {
  std::string P = newKey("k");
  auto Server = serverWith(P);
  auto Creds = credentials(P);
  Hello Hi;
  client::introduce(Creds, Hi);
  EXPECT_EQ(Hi.Method, AuthMethod::Key);
  EXPECT_EQ(Hi.ClientNonce.size(), kNonceBytes);
  server::PendingAuth State;
  auto Ch = Server.challenge(Hi, State);
  ASSERT_TRUE(Ch) << Ch.status().message();
  auto Proof = client::answerChallenge(Creds, Hi, *Ch);
  ASSERT_TRUE(Proof) << Proof.status().message();
  auto Id = Server.verify(State, *Proof);
  ASSERT_TRUE(Id) << Id.status().message();
  EXPECT_EQ(Id->Uid, geteuid());
}

TEST_F(AuthTest, AWrongKeyFailsOnBothSides) {
  auto Server = serverWith(newKey("server"));
  auto Creds = credentials(newKey("client")); // same owner, other bytes
  Hello Hi;
  client::introduce(Creds, Hi);
  server::PendingAuth State;
  auto Ch = Server.challenge(Hi, State);
  ASSERT_TRUE(Ch);
  // The client sees that the server does not hold its key...
  auto Proof = client::answerChallenge(Creds, Hi, *Ch);
  ASSERT_FALSE(Proof);
  EXPECT_EQ(Proof.status().code(), ErrorCode::Auth);
  // ...and a client that answers anyway is refused.
  AuthProof Forged;
  Forged.Proof = auth::keyProof(
      *Creds.Key, auth::transcript(auth::Role::Client, Hi.User, Hi.ClientNonce,
                                   Ch->ServerNonce));
  auto Id = Server.verify(State, Forged);
  ASSERT_FALSE(Id);
  EXPECT_NE(Id.status().message().find("wrong key"), std::string::npos);
}

TEST_F(AuthTest, AReplayedHandshakeIsRefused) {
  std::string P = newKey("k");
  auto Server = serverWith(P);
  auto Creds = credentials(P);
  Hello Hi;
  client::introduce(Creds, Hi);
  server::PendingAuth First, Second;
  auto Ch1 = Server.challenge(Hi, First);
  auto Proof = client::answerChallenge(Creds, Hi, *Ch1);
  ASSERT_TRUE(Proof);
  ASSERT_TRUE(Server.verify(First, *Proof));
  // The same Hello and proof again: the server's nonce is new.
  auto Ch2 = Server.challenge(Hi, Second);
  ASSERT_TRUE(Ch2);
  EXPECT_NE(Ch1->ServerNonce, Ch2->ServerNonce);
  auto Id = Server.verify(Second, *Proof);
  ASSERT_FALSE(Id);
  EXPECT_EQ(Id.status().code(), ErrorCode::Auth);
  // Nor does the server's own proof serve as the client's.
  AuthProof Mirror;
  Mirror.Proof = Ch2->Proof;
  EXPECT_FALSE(Server.verify(Second, Mirror));
}

TEST_F(AuthTest, ClientsWithoutProofOrKnownUserAreRefused) {
  std::string P = newKey("k");
  auto Server = serverWith(P);
  Hello Anonymous;
  server::PendingAuth State;
  auto Ch = Server.challenge(Anonymous, State);
  ASSERT_FALSE(Ch);
  EXPECT_NE(Ch.status().message().find("requires authentication"),
            std::string::npos);
  Hello Stranger;
  Stranger.Method = AuthMethod::Key;
  Stranger.User = "no-such-user-here";
  Stranger.ClientNonce.assign(kNonceBytes, 1);
  Ch = Server.challenge(Stranger, State);
  ASSERT_TRUE(Ch) << "a user without a key is challenged like any other";
  // Even a proof with a key the server holds (another user's) is refused.
  AuthProof Guess;
  Guess.Proof =
      auth::keyProof(*auth::loadKeyFile(P),
                     auth::transcript(auth::Role::Client, Stranger.User,
                                      Stranger.ClientNonce, Ch->ServerNonce));
  auto Id = Server.verify(State, Guess);
  ASSERT_FALSE(Id);
  EXPECT_NE(Id.status().message().find("wrong key for user"),
            std::string::npos);
  Hello NoMunge = Stranger;
  NoMunge.Method = AuthMethod::Munge;
  EXPECT_FALSE(Server.challenge(NoMunge, State));
  Hello ShortNonce = Stranger;
  ShortNonce.ClientNonce.resize(3);
  EXPECT_FALSE(Server.challenge(ShortNonce, State));
}

TEST_F(AuthTest, TranscriptsDifferByRoleUserAndNonces) {
  std::vector<uint8_t> A(kNonceBytes, 1), B(kNonceBytes, 2);
  auto T = auth::transcript(auth::Role::Client, "u", A, B);
  EXPECT_NE(T, auth::transcript(auth::Role::Server, "u", A, B));
  EXPECT_NE(T, auth::transcript(auth::Role::Client, "v", A, B));
  EXPECT_NE(T, auth::transcript(auth::Role::Client, "u", B, A));
  EXPECT_NE(auth::freshNonce(), auth::freshNonce());
}

// The supervisor's intake on the in-memory transport: one handshake per
// connection, a refusal ends it, and a connection that never finishes is
// closed at its deadline.
class IntakeTest : public AuthTest {
protected:
  void SetUp() override {
    AuthTest::SetUp();
    Key = newKey("k");
    Server = std::make_unique<server::Authenticator>(serverWith(Key));
    In = std::make_unique<server::Intake>(Opts, *Server);
    In->setWorker(SW.get());
    SW->setHandler([this](const uint8_t *C, size_t L,
                          const transport::BulkData &, transport::Peer F) {
      AtServer.emplace_back(C, C + L);
      From = F;
      return false;
    });
    CW->setHandler([this](const uint8_t *C, size_t L,
                          const transport::BulkData &, transport::Peer) {
      AtClient.emplace_back(C, C + L);
      return false;
    });
    auto P = CW->connectToWorker(SW->address(), true);
    ASSERT_TRUE(P);
    ToServer = *P;
    // The server's end of the connection is known from its first message.
    send(MsgType::Ping, Empty());
    In->accepted(From);
  }
  /// Send a frame to the server; its header and body as the intake gets them.
  template <typename Body> void send(MsgType T, const Body &B) {
    Header H;
    H.Type = T;
    H.RequestId = ++Ids;
    AtServer.clear();
    CW->send(ToServer, frame(H, B), nullptr, 0, nullptr, true);
    SW->progress();
    ASSERT_EQ(AtServer.size(), 1u);
    ASSERT_TRUE(
        parseFrame(AtServer[0].data(), AtServer[0].size(), Got, Rd).ok());
  }
  /// The server's one answer, of type T.
  template <typename Body> Body answer(MsgType T) {
    AtClient.clear();
    CW->progress();
    Body B;
    Header H;
    Reader R;
    EXPECT_EQ(AtClient.size(), 1u);
    if (AtClient.size() == 1 &&
        parseFrame(AtClient[0].data(), AtClient[0].size(), H, R).ok()) {
      EXPECT_EQ(H.Type, T);
      EXPECT_TRUE(decodeBody(R, B).ok());
    }
    return B;
  }

  server::ServerOptions Opts;
  std::string Key;
  std::unique_ptr<server::Authenticator> Server;
  std::unique_ptr<server::Intake> In;
  transport::MemoryNetwork Net;
  std::unique_ptr<transport::MemoryWorker> SW = Net.create(), CW = Net.create();
  transport::Peer ToServer = nullptr, From = nullptr;
  std::vector<std::vector<uint8_t>> AtServer, AtClient;
  Header Got;
  Reader Rd;
  uint64_t Ids = 0;
};

TEST_F(IntakeTest, AProvedClientIsAdmittedOnce) {
  auto Creds = credentials(Key);
  Hello Hi;
  client::introduce(Creds, Hi);
  send(MsgType::Hello, Hi);
  EXPECT_FALSE(In->onHello(From, Got, Rd, false)) << "admitted unproved";
  auto Ch = answer<AuthChallenge>(MsgType::AuthChallenge);
  auto Proof = client::answerChallenge(Creds, Hi, Ch);
  ASSERT_TRUE(Proof) << Proof.status().message();
  send(MsgType::AuthProof, *Proof);
  auto A = In->onAuthProof(From, Got, Rd);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Id.Uid, geteuid());
  In->forget(From);
  // The same proof again: no challenge is pending.
  send(MsgType::AuthProof, *Proof);
  EXPECT_FALSE(In->onAuthProof(From, Got, Rd));
  EXPECT_EQ(answer<HelloReply>(MsgType::HelloReply).Message,
            "an authentication proof without a challenge");
  // A Hello on the served connection.
  send(MsgType::Hello, Hi);
  EXPECT_FALSE(In->onHello(From, Got, Rd, true));
  EXPECT_EQ(answer<HelloReply>(MsgType::HelloReply).Message,
            "this connection already has a session");
}

TEST_F(IntakeTest, ASecondHelloEndsTheHandshake) {
  auto Creds = credentials(Key);
  Hello Hi;
  client::introduce(Creds, Hi);
  send(MsgType::Hello, Hi);
  EXPECT_FALSE(In->onHello(From, Got, Rd, false));
  auto Ch = answer<AuthChallenge>(MsgType::AuthChallenge);
  send(MsgType::Hello, Hi);
  EXPECT_FALSE(In->onHello(From, Got, Rd, false));
  HelloReply R = answer<HelloReply>(MsgType::HelloReply);
  EXPECT_EQ(R.Code, kErrInvalid);
  EXPECT_EQ(R.Message, "this connection is authenticating");
  // The first challenge's right proof no longer admits.
  auto Proof = client::answerChallenge(Creds, Hi, Ch);
  ASSERT_TRUE(Proof);
  send(MsgType::AuthProof, *Proof);
  EXPECT_FALSE(In->onAuthProof(From, Got, Rd));
  EXPECT_EQ(answer<HelloReply>(MsgType::HelloReply).Code, kErrAuth);
}

TEST_F(IntakeTest, BeyondMaxStartupsTheOldestHandshakeIsClosed) {
  Opts.MaxStartups = 2;
  int Errors = 0;
  CW->setPeerErrorHandler([&](transport::Peer, const Status &) { ++Errors; });
  // Two more connections in their handshake: the fixture's (the oldest) goes.
  std::vector<std::unique_ptr<transport::MemoryWorker>> Others;
  for (int K = 0; K < 2; ++K) {
    Others.push_back(Net.create());
    auto P = Others.back()->connectToWorker(SW->address(), true);
    ASSERT_TRUE(P);
    Others.back()->send(*P, frame(Header(), Empty()), nullptr, 0, nullptr,
                        true);
    SW->progress();
    In->accepted(From);
  }
  CW->progress();
  EXPECT_EQ(Errors, 1) << "the oldest handshake was not closed";
  EXPECT_TRUE(In->waiting());
}

TEST_F(IntakeTest, ALateHandshakeIsClosed) {
  Opts.HandshakeTimeout = 0;
  EXPECT_TRUE(In->waiting());
  In->dropLate();
  EXPECT_FALSE(In->waiting());
  int Errors = 0;
  CW->setPeerErrorHandler([&](transport::Peer, const Status &) { ++Errors; });
  CW->progress();
  SW->progress();
  EXPECT_EQ(Errors, 1) << "the client did not see its connection close";
}

} // namespace
