/* A shared object shaped like an OpenMP device image: two offload entries
 * in the omp_offloading_entries section. */
struct entry {
  void *addr;
  const char *name;
  unsigned long size;
  int flags;
  int reserved;
};
int fixture_global[4];
void fixture_kernel(void) {}
__attribute__((section("omp_offloading_entries"), used)) struct entry
    fixture_entries[2] = {{(void *)fixture_kernel, "fixture_kernel", 0, 0, 0},
                          {fixture_global, "fixture_global", 16, 0, 0}};
