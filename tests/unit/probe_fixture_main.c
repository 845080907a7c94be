// A program that needs libomptarget (the stand-in of tests/unit's
// CMakeLists.txt), for libomptarget_probe_test.cpp to probe.
int main(void) { return 0; }
