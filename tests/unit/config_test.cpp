// Client configuration and server command-line parsing.
#include "common/byte_size.h"
#include "common/config.h"
#include "server/options.h"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <map>

using namespace ompdpu;

namespace {
EnvLookup envOf(std::map<std::string, std::string> M) {
  auto Shared = std::make_shared<std::map<std::string, std::string>>(M);
  return [Shared](const char *N) -> const char * {
    auto It = Shared->find(N);
    return It == Shared->end() ? nullptr : It->second.c_str();
  };
}
} // namespace

TEST(Config, ParsesDeviceLists) {
  auto L = parseDeviceList("127.0.0.1:18515, dpu-0:1,[::1]:9");
  ASSERT_TRUE(L);
  ASSERT_EQ(L->size(), 3u);
  EXPECT_EQ((*L)[0].Host, "127.0.0.1");
  EXPECT_EQ((*L)[0].Port, 18515);
  EXPECT_EQ((*L)[1].text(), "dpu-0:1");
  EXPECT_EQ((*L)[2].Host, "::1");
  EXPECT_EQ((*L)[2].text(), "[::1]:9");
}

TEST(Config, RejectsBadDeviceLists) {
  for (const char *Bad :
       {"host", "host:", ":80", "host:0", "host:65536", "host:12x", "a:1,,b:2",
        "::1:80", "[::1:80", "host:123456"})
    EXPECT_FALSE(parseDeviceList(Bad)) << Bad;
}

TEST(Config, UnsetMeansNoDevices) {
  auto C = loadClientConfig(envOf({{"HOME", "/nonexistent"}}));
  ASSERT_TRUE(C);
  EXPECT_TRUE(C->Devices.empty());
}

TEST(Config, EnvironmentWinsAndTimeoutsParse) {
  auto C = loadClientConfig(envOf({{"OMPDPU_DEVICES", "a:1,b:2"},
                                   {"OMPDPU_TIMEOUT", "2.5"},
                                   {"OMPDPU_CONNECT_TIMEOUT", "1"}}));
  ASSERT_TRUE(C);
  EXPECT_EQ(C->Devices.size(), 2u);
  EXPECT_DOUBLE_EQ(C->ResponseTimeout, 2.5);
  EXPECT_DOUBLE_EQ(C->ConnectTimeout, 1.0);
  EXPECT_FALSE(loadClientConfig(envOf({{"OMPDPU_TIMEOUT", "soon"}})));
  EXPECT_FALSE(loadClientConfig(envOf({{"OMPDPU_TIMEOUT", "-1"}})));
  EXPECT_FALSE(loadClientConfig(envOf({{"OMPDPU_DEVICES", "nope"}})));
  // 0 means no timeout; a heartbeat or a connect needs some time.
  EXPECT_TRUE(loadClientConfig(envOf({{"OMPDPU_TIMEOUT", "0"}})));
  auto Ping = loadClientConfig(envOf({{"OMPDPU_HEARTBEAT", "0"}}));
  ASSERT_FALSE(Ping);
  EXPECT_EQ(Ping.status().message(),
            "OMPDPU_HEARTBEAT='0' is not a number of seconds >= 0.001");
  EXPECT_FALSE(loadClientConfig(envOf({{"OMPDPU_HEARTBEAT", "1e-9"}})));
  EXPECT_FALSE(loadClientConfig(envOf({{"OMPDPU_CONNECT_TIMEOUT", "0"}})));
  auto Spin = loadClientConfig(envOf({{"OMPDPU_SPIN_US", "abc"}}));
  ASSERT_FALSE(Spin);
  EXPECT_NE(Spin.status().message().find("microseconds"), std::string::npos);
}

TEST(Config, PollingAndWakeSlice) {
  auto C = loadClientConfig(envOf({{"OMPDPU_DEVICES", ""}}));
  ASSERT_TRUE(C);
  EXPECT_DOUBLE_EQ(C->SpinMicros, 50);
  EXPECT_DOUBLE_EQ(C->WakeSliceMicros, 0); // off unless asked for
  C = loadClientConfig(envOf({{"OMPDPU_DEVICES", ""},
                              {"OMPDPU_SPIN_US", "0"},
                              {"OMPDPU_WAKE_SLICE_US", "250"}}));
  ASSERT_TRUE(C);
  EXPECT_DOUBLE_EQ(C->SpinMicros, 0);
  EXPECT_DOUBLE_EQ(C->WakeSliceMicros, 250);
  auto Bad = loadClientConfig(envOf({{"OMPDPU_WAKE_SLICE_US", "short"}}));
  ASSERT_FALSE(Bad);
  EXPECT_NE(Bad.status().message().find("OMPDPU_WAKE_SLICE_US"),
            std::string::npos);
}

TEST(Config, YieldWhenIdle) {
  auto C = loadClientConfig(envOf({{"OMPDPU_DEVICES", ""}}));
  ASSERT_TRUE(C);
  EXPECT_FALSE(C->YieldWhenIdle);
  C = loadClientConfig(envOf({{"OMPDPU_DEVICES", ""}, {"OMPDPU_YIELD", "1"}}));
  ASSERT_TRUE(C);
  EXPECT_TRUE(C->YieldWhenIdle);
  auto Bad = loadClientConfig(envOf({{"OMPDPU_YIELD", "sometimes"}}));
  ASSERT_FALSE(Bad);
  EXPECT_NE(Bad.status().message().find("OMPDPU_YIELD"), std::string::npos);
}

TEST(Config, ReadsConfigFile) {
  std::string Path = ::testing::TempDir() + "/ompdpu-devices";
  {
    std::ofstream F(Path);
    F << "# BlueField-2 cards\n dpu0:18515  # first\n\n10.0.0.2:18515\n";
  }
  auto C = loadClientConfig(envOf({{"OMPDPU_CONFIG", Path}}));
  ASSERT_TRUE(C);
  ASSERT_EQ(C->Devices.size(), 2u);
  EXPECT_EQ(C->Devices[0].Host, "dpu0");
  EXPECT_EQ(C->DevicesFrom, Path);
  {
    std::ofstream F(Path);
    F << "dpu0:18515\nbroken line\n";
  }
  auto Bad = loadClientConfig(envOf({{"OMPDPU_CONFIG", Path}}));
  ASSERT_FALSE(Bad);
  EXPECT_NE(Bad.status().message().find("line 2"), std::string::npos);
  EXPECT_FALSE(loadClientConfig(envOf({{"OMPDPU_CONFIG", "/nonexistent"}})));
  std::remove(Path.c_str());
}

TEST(ServerOptions, CoreListsAndSizes) {
  auto L = server::parseCoreList("0-2,5,2");
  ASSERT_TRUE(L);
  EXPECT_EQ(*L, (std::vector<int>{0, 1, 2, 5}));
  EXPECT_FALSE(server::parseCoreList("3-1"));
  EXPECT_FALSE(server::parseCoreList("a"));
  EXPECT_FALSE(server::parseCoreList(""));
  EXPECT_EQ(*ompdpu::parseByteSize("512M"), 512ull << 20);
  EXPECT_EQ(*ompdpu::parseByteSize("8G"), 8ull << 30);
  EXPECT_EQ(*ompdpu::parseByteSize("4096"), 4096u);
  EXPECT_FALSE(ompdpu::parseByteSize("0"));
  EXPECT_FALSE(ompdpu::parseByteSize("12X"));
  EXPECT_FALSE(ompdpu::parseByteSize("99999999999999G"));
}

TEST(ServerOptions, CommandLine) {
  const char *Argv[] = {
      "ompdpu-server", "--listen", "127.0.0.1:0", "--cores", "1",
      "--memory",      "1G"};
  auto O = server::parseServerOptions(7, const_cast<char **>(Argv));
  ASSERT_TRUE(O);
  EXPECT_EQ(O->Listen, "127.0.0.1:0");
  EXPECT_EQ(O->Cores, std::vector<int>{1});
  EXPECT_EQ(O->Memory, 1ull << 30);
  const char *Bad[] = {"ompdpu-server", "--bogus"};
  EXPECT_FALSE(server::parseServerOptions(2, const_cast<char **>(Bad)));
  const char *Missing[] = {"ompdpu-server", "--listen"};
  EXPECT_FALSE(server::parseServerOptions(2, const_cast<char **>(Missing)));
}

TEST(ServerOptions, SessionLimitsASessionCanLiveWith) {
  const char *Fine[] = {"ompdpu-server", "--address-space", "256M",
                        "--max-open-files", "1048576"};
  ASSERT_TRUE(server::parseServerOptions(5, const_cast<char **>(Fine)));
  const char *Tiny[] = {"ompdpu-server", "--address-space", "64M"};
  auto O = server::parseServerOptions(3, const_cast<char **>(Tiny));
  ASSERT_FALSE(O);
  EXPECT_EQ(O.status().message(),
            "--address-space 64M: a session needs at least 256M");
  const char *Files[] = {"ompdpu-server", "--max-open-files", "1048577"};
  EXPECT_FALSE(server::parseServerOptions(3, const_cast<char **>(Files)));
}

TEST(ServerOptions, SpinAndSharedCores) {
  const char *Own[] = {"ompdpu-server"};
  auto O = server::parseServerOptions(1, const_cast<char **>(Own));
  ASSERT_TRUE(O);
  EXPECT_FALSE(O->SharedCores);
  EXPECT_EQ(O->SpinMicros, 1000);
  const char *Both[] = {"ompdpu-server", "--spin-us", "0", "--shared-cores"};
  O = server::parseServerOptions(4, const_cast<char **>(Both));
  ASSERT_TRUE(O);
  EXPECT_TRUE(O->SharedCores);
  EXPECT_EQ(O->SpinMicros, 0);
  const char *NoNumber[] = {"ompdpu-server", "--spin-us", "soon"};
  EXPECT_FALSE(server::parseServerOptions(3, const_cast<char **>(NoNumber)));
}
