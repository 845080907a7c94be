// Key files, proofs and the handshake's authentication, both sides, without
// a network: the supervisor's Authenticator against the client's
// Credentials.
#include "auth/key_file.h"
#include "auth/proof.h"
#include "client/credentials.h"
#include "server/authenticator.h"

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
  EXPECT_FALSE(auth::loadKeyFile(L));

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
  auto Server = serverWith(newKey("k"));
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
  ASSERT_FALSE(Ch);
  EXPECT_NE(Ch.status().message().find("no key for user"), std::string::npos);
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

} // namespace
