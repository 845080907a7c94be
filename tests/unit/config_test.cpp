// Client configuration and server command-line parsing.
#include "common/byte_size.h"
#include "common/config.h"
#include "common/device_map.h"
#include "server/options.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <unistd.h>

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

TEST(DeviceMap, NodeLinesAndLinesForEveryHost) {
  auto M = parseDeviceMap("# cluster\nn1 = 10.0.1.2:18515, 10.0.1.3:18515\n"
                          "n2.cluster.example=10.0.2.2:1 # second\n"
                          "dpu0:9\n");
  ASSERT_TRUE(M);
  ASSERT_EQ(M->Nodes.size(), 2u);
  EXPECT_EQ(M->Nodes[0].Node, "n1");
  ASSERT_EQ(M->Nodes[0].Devices.size(), 2u);
  EXPECT_EQ(M->Nodes[0].Devices[1].text(), "10.0.1.3:18515");
  ASSERT_EQ(M->Everywhere.size(), 1u);
  EXPECT_EQ(devicesOfNode(*M, "n1"), &M->Nodes[0].Devices);
  EXPECT_EQ(devicesOfNode(*M, "n1.cluster.example"), &M->Nodes[0].Devices);
  EXPECT_EQ(devicesOfNode(*M, "n2"), &M->Nodes[1].Devices);
  EXPECT_EQ(devicesOfNode(*M, "n3"), &M->Everywhere);
  EXPECT_EQ(devicesOfNode(*M, "n10"), &M->Everywhere); // not n1
  auto OnlyNodes = parseDeviceMap("n1 = a:1\n");
  ASSERT_TRUE(OnlyNodes);
  EXPECT_EQ(devicesOfNode(*OnlyNodes, "n2"), nullptr);
}

TEST(DeviceMap, RefusesBadLinesNamingThem) {
  for (const char *Bad :
       {"n1 = \n", "= a:1\n", "n 1 = a:1\n", "n1 = a\n", "n1 = a:1,,b:2\n",
        "a:1\nn1 = a:1\nn1 = b:1\n", "n$ = a:1\n"}) {
    auto M = parseDeviceMap(Bad);
    ASSERT_FALSE(M) << Bad;
    EXPECT_NE(M.status().message().find("line "), std::string::npos) << Bad;
  }
  EXPECT_EQ(parseDeviceMap("a:1\nn1 = a:1\nn1 = b:1\n").status().message(),
            "line 3: node 'n1' is listed twice");
}

TEST(DeviceMap, LocalRankFromLaunchers) {
  auto None = localRankFrom(envOf({}));
  ASSERT_TRUE(None);
  EXPECT_FALSE(*None);
  auto Ompi = localRankFrom(envOf({{"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                   {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                                   {"SLURM_LOCALID", "0"}}));
  ASSERT_TRUE(Ompi && *Ompi);
  EXPECT_EQ((*Ompi)->Rank, 1u);
  EXPECT_EQ((*Ompi)->Size, 4u);
  EXPECT_STREQ((*Ompi)->From, "OMPI_COMM_WORLD_LOCAL_RANK");
  auto Slurm = localRankFrom(envOf({{"SLURM_LOCALID", "2"},
                                    {"SLURM_NODEID", "1"},
                                    {"SLURM_TASKS_PER_NODE", "1,3(x2)"}}));
  ASSERT_TRUE(Slurm && *Slurm);
  EXPECT_EQ((*Slurm)->Size, 3u);
  auto Hydra = localRankFrom(
      envOf({{"MPI_LOCALRANKID", "0"}, {"MPI_LOCALNRANKS", "2"}}));
  ASSERT_TRUE(Hydra && *Hydra);
  EXPECT_EQ((*Hydra)->Size, 2u);
  EXPECT_FALSE(localRankFrom(envOf({{"OMPI_COMM_WORLD_LOCAL_RANK", "x"}})));
  EXPECT_FALSE(localRankFrom(envOf({{"OMPI_COMM_WORLD_LOCAL_RANK", "2"},
                                    {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}})));
  EXPECT_FALSE(localRankFrom(envOf({{"SLURM_LOCALID", "1"},
                                    {"SLURM_NODEID", "0"},
                                    {"SLURM_TASKS_PER_NODE", "1,3(x2)"}})));
}

TEST(DeviceMap, SharesOfANodesDevices) {
  using V = std::vector<size_t>;
  EXPECT_EQ(shareOfDevices(4, {0, 2}), (V{0, 1}));
  EXPECT_EQ(shareOfDevices(4, {1, 2}), (V{2, 3}));
  EXPECT_EQ(shareOfDevices(3, {1, 2}), (V{1, 2}));
  EXPECT_EQ(shareOfDevices(1, {3, 4}), (V{0}));
  EXPECT_EQ(shareOfDevices(2, {3, 4}), (V{1}));
  EXPECT_EQ(shareOfDevices(0, {0, 1}), V{});
  // Every device used exactly once when there are at least as many.
  for (size_t N = 1; N <= 9; ++N)
    for (unsigned S = 1; S <= N; ++S) {
      std::vector<int> Uses(N);
      for (unsigned R = 0; R < S; ++R)
        for (size_t K : shareOfDevices(N, {R, S}))
          ++Uses[K];
      EXPECT_EQ(std::count(Uses.begin(), Uses.end(), 1), long(N)) << N << S;
    }
}

TEST(Config, ClusterMapPicksTheNodeAndTheRanksShare) {
  std::string Path = ::testing::TempDir() + "/ompdpu-cluster-devices";
  {
    std::ofstream F(Path);
    F << "n1 = 10.0.1.2:18515, 10.0.1.3:18515\nn2 = 10.0.2.2:18515\n";
  }
  auto Rank1 = loadClientConfig(envOf({{"OMPDPU_CONFIG", Path},
                                       {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                       {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}),
                                "n1");
  ASSERT_TRUE(Rank1);
  ASSERT_EQ(Rank1->Devices.size(), 1u);
  EXPECT_EQ(Rank1->Devices[0].text(), "10.0.1.3:18515");
  EXPECT_EQ(Rank1->NodeDevices.size(), 2u);
  EXPECT_EQ(Rank1->Share, "local rank 1 of 2 (OMPI_COMM_WORLD_LOCAL_RANK): "
                          "DPU 1 of the node's 2");
  auto All = loadClientConfig(envOf({{"OMPDPU_CONFIG", Path},
                                     {"OMPDPU_DEVICE_SHARE", "all"},
                                     {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                     {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}),
                              "n1");
  ASSERT_TRUE(All);
  EXPECT_EQ(All->Devices.size(), 2u);
  auto N2 = loadClientConfig(envOf({{"OMPDPU_CONFIG", Path}}), "n2");
  ASSERT_TRUE(N2);
  ASSERT_EQ(N2->Devices.size(), 1u);
  EXPECT_EQ(N2->Devices[0].text(), "10.0.2.2:18515");
  auto N3 = loadClientConfig(envOf({{"OMPDPU_CONFIG", Path}}), "n3");
  ASSERT_TRUE(N3);
  EXPECT_TRUE(N3->Devices.empty());
  EXPECT_EQ(N3->NoDevicesReason,
            Path +
                " lists no DPU for this node ('n3') and none for every node");
  // OMPDPU_DEVICES is taken as given, unless asked to share it.
  auto Given = loadClientConfig(envOf({{"OMPDPU_DEVICES", "a:1,b:2"},
                                       {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                       {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}));
  ASSERT_TRUE(Given);
  EXPECT_EQ(Given->Devices.size(), 2u);
  auto Shared = loadClientConfig(envOf({{"OMPDPU_DEVICES", "a:1,b:2"},
                                        {"OMPDPU_DEVICE_SHARE", "local-rank"},
                                        {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                        {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}));
  ASSERT_TRUE(Shared);
  ASSERT_EQ(Shared->Devices.size(), 1u);
  EXPECT_EQ(Shared->Devices[0].text(), "b:2");
  EXPECT_FALSE(loadClientConfig(
      envOf({{"OMPDPU_DEVICES", "a:1"}, {"OMPDPU_DEVICE_SHARE", "some"}})));
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

TEST(ServerOptions, MaxStartups) {
  auto Parse = [](const char *Value) {
    const char *Argv[] = {"ompdpu-server", "--max-startups", Value};
    return server::parseServerOptions(3, const_cast<char **>(Argv));
  };
  const char *None[] = {"ompdpu-server"};
  auto O = server::parseServerOptions(1, const_cast<char **>(None));
  ASSERT_TRUE(O);
  EXPECT_EQ(O->MaxStartups, 512u);
  EXPECT_EQ(O->MaxStartupsPerSource, 64u);
  O = Parse("100:10");
  ASSERT_TRUE(O);
  EXPECT_EQ(O->MaxStartups, 100u);
  EXPECT_EQ(O->MaxStartupsPerSource, 10u);
  O = Parse("20"); // one number: per address at most 64, never above it
  ASSERT_TRUE(O);
  EXPECT_EQ(O->MaxStartupsPerSource, 20u);
  for (const char *Bad :
       {"", "0", "10:0", "10:11", "x", "10:", ":5", "10:5x", "1000001"})
    EXPECT_FALSE(Parse(Bad)) << Bad;
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

TEST(TraceSetting, OneReadingOfOmpdpuTrace) {
  auto With = [](const char *Value) {
    return traceSetting([Value](const char *Name) -> const char * {
      return std::string(Name) == "OMPDPU_TRACE" ? Value : nullptr;
    });
  };
  for (const char *Off : {(const char *)nullptr, "", "0"}) {
    EXPECT_FALSE(With(Off).Summary) << (Off ? Off : "unset");
    EXPECT_EQ(With(Off).File, "");
  }
  EXPECT_TRUE(With("1").Summary);
  EXPECT_EQ(With("1").File, "");
  EXPECT_TRUE(With("2").Summary);
  TraceSetting F = With("/tmp/t.%p.json");
  EXPECT_TRUE(F.Summary);
  EXPECT_EQ(F.File, "/tmp/t." + std::to_string(getpid()) + ".json");
}
