//===- libomptarget_probe_test.cpp - Which libomptarget a program loads ---===//
#include "tools/libomptarget_probe.h"
#include "tools/plugin_dirs.h"

#include <cstdio>
#include <cstdlib>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

using namespace ompdpu::tools;

TEST(LibomptargetProbe, MajorFromSoname) {
  EXPECT_EQ(libomptargetMajor("libomptarget.so.15", ""), 15);
  EXPECT_EQ(libomptargetMajor("libomptarget.so.18.1", ""), 18);
  EXPECT_EQ(libomptargetMajor("libomptarget.so.19.1", ""), 19);
  EXPECT_EQ(libomptargetMajor("libomptarget.so", "/usr/lib/llvm-14/lib/x"), 14);
  EXPECT_EQ(libomptargetMajor("libomptarget.so", "/opt/llvm-16/lib/x"), 16);
  // llvm-patches/ rebuilds 14 elsewhere, under the same unversioned name.
  EXPECT_EQ(libomptargetMajor("libomptarget.so", "/b/patched/x"), 14);
  EXPECT_EQ(libomptargetMajor("libomp.so.5", ""), 0);
  EXPECT_EQ(libomptargetMajor("libomptarget.solo", ""), 0);
}

TEST(LibomptargetProbe, SearchOrderFollowsTheLoader) {
  DynamicInfo D;
  D.RPath = "$ORIGIN/rpath";
  auto Dirs = searchDirs(D, "/prog", "/ld1:/ld2");
  ASSERT_GE(Dirs.size(), 3u);
  EXPECT_EQ(Dirs[0], "/prog/rpath"); // DT_RPATH before LD_LIBRARY_PATH
  EXPECT_EQ(Dirs[1], "/ld1");
  EXPECT_EQ(Dirs[2], "/ld2");
  D.RunPath = "${ORIGIN}/../lib";
  Dirs = searchDirs(D, "/prog", "/ld1");
  ASSERT_GE(Dirs.size(), 2u);
  EXPECT_EQ(Dirs[0], "/ld1"); // DT_RUNPATH: after it, and no DT_RPATH
  EXPECT_EQ(Dirs[1], "/prog/../lib");
}

TEST(LibomptargetProbe, ProgramLinkedAgainstLibomptarget19) {
  LibomptargetProbe P = probeLibomptarget(OMPDPU_PROBE_PROGRAM, nullptr);
  EXPECT_EQ(P.Needed, "libomptarget.so.19.1");
  EXPECT_EQ(P.Path,
            std::string(OMPDPU_PROBE_LIB_DIR) + "/libomptarget.so.19.1");
  EXPECT_EQ(P.Major, 19);
  EXPECT_EQ(pluginPathFor("/i/lib/ompdpu", P.Major),
            "/i/lib/ompdpu/llvm19/emulated:/i/lib/ompdpu/llvm19");
}

TEST(LibomptargetProbe, ProgramsWithoutLibomptarget) {
  // A program that needs no libomptarget, and a script.
  LibomptargetProbe P = probeLibomptarget("/proc/self/exe", nullptr);
  EXPECT_TRUE(P.Needed.empty());
  EXPECT_EQ(P.Major, 0);
  char Script[] = "/tmp/ompdpu-probe-XXXXXX";
  int Fd = mkstemp(Script);
  ASSERT_GE(Fd, 0);
  ASSERT_EQ(write(Fd, "#!/bin/sh\n", 10), 10);
  close(Fd);
  EXPECT_EQ(probeLibomptarget(Script, nullptr).Major, 0);
  unlink(Script);
  EXPECT_EQ(probeLibomptarget("no-such-program-ompdpu", nullptr).Major, 0);
}

TEST(LibomptargetProbe, ProgramGivenItsOffloadLibrary) {
  // A program that needs no libomptarget, given a file that needs one (as a
  // program that dlopens its offload code is): that file decides.
  std::string Self = "/proc/self/exe", Lib = OMPDPU_PROBE_PROGRAM;
  char *Argv[] = {Self.data(), const_cast<char *>("-v"), Lib.data(), nullptr};
  EXPECT_EQ(probeCommand(Argv, nullptr).Major, 19);
  char *Alone[] = {Self.data(), nullptr};
  EXPECT_EQ(probeCommand(Alone, nullptr).Major, 0);
}

TEST(PluginDirs, EachVersionItsDirectory) {
  // Unknown (a program that dlopens its offload code): 14-16's, and 19's
  // libomptarget.so.19.1, which only a library of LLVM 19 would load.
  EXPECT_EQ(pluginPathFor("/l", 0), "/l/emulated:/l:/l/llvm19");
  EXPECT_EQ(pluginPathFor("/l", 14), "/l/emulated:/l:/l/llvm19");
  EXPECT_EQ(pluginPathFor("/l", 16), "/l/emulated:/l:/l/llvm19");
  EXPECT_EQ(pluginPathFor("/l", 17), "/l/llvm17/emulated:/l/llvm17:/l/llvm19");
  EXPECT_EQ(pluginPathFor("/l", 18), "/l/llvm18/emulated:/l/llvm18:/l/llvm19");
  EXPECT_EQ(layoutFor(13), nullptr);
  EXPECT_EQ(layoutFor(20), nullptr);
}
