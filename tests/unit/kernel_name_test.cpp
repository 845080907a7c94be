// Kernel names as their users wrote them: clang's region names read back
// as function and line (C++ names demangled), anything else left alone.
#include "common/kernel_name.h"

#include <gtest/gtest.h>

using namespace ompdpu;

TEST(KernelName, ARegionIsItsFunctionAndLine) {
  RegionPlace P = regionPlace("__omp_offloading_fe00_a7c251_main_l12");
  EXPECT_EQ(P.Function, "main");
  EXPECT_EQ(P.Line, 12u);
  EXPECT_EQ(
      kernelDisplayName("__omp_offloading_fe00_a7c251_main_l12", "faults.c"),
      "main (faults.c:12)");
  EXPECT_EQ(kernelDisplayName("__omp_offloading_fe00_a7c251_main_l12", ""),
            "main (line 12)");
}

TEST(KernelName, UnderscoresAndCxxNamesSurvive) {
  EXPECT_EQ(
      kernelDisplayName("__omp_offloading_10302_2c1a4e_my_fun_2_l305", "a.c"),
      "my_fun_2 (a.c:305)");
  EXPECT_EQ(kernelDisplayName(
                "__omp_offloading_fe00_a7c251__ZN5Model7forwardEPfi_l40",
                "model.cpp"),
            "Model::forward(float*, int) (model.cpp:40)");
}

TEST(KernelName, OtherNamesComeBackAsTheyAre) {
  for (const char *N :
       {"fixture_kernel", "__omp_offloading_", "__omp_offloading_fe00_main_l3",
        "__omp_offloading_fe00_a7c251_main_lx",
        "__omp_offloading_zz_a7_main_l3", "__omp_offloading_fe00_a7c251_main_l",
        "__omp_offloading_fe00_a7_l3"})
    EXPECT_EQ(kernelDisplayName(N, "f.c"), N) << N;
}
