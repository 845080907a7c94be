// Uses one symbol of each library the server links, so the link really resolves them.
#include <ffi.h>
#include <gelf.h>
#include <libelf.h>
#include <omp.h>
#include <ucp/api/ucp.h>

#include <cstdio>
#include <thread>

static int add(int a, int b) { return a + b; }

int main() {
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_AM;
  ucp_context_h ctx;
  if (ucp_init(&params, nullptr, &ctx) == UCS_OK) ucp_cleanup(ctx);

  ffi_cif cif;
  ffi_type *types[2] = {&ffi_type_sint, &ffi_type_sint};
  ffi_prep_cif(&cif, FFI_DEFAULT_ABI, 2, &ffi_type_sint, types);
  int a = 1, b = 2;
  void *args[2] = {&a, &b};
  ffi_arg r = 0;
  ffi_call(&cif, FFI_FN(add), &r, args);

  elf_version(EV_CURRENT);

  long sum = 0;
#pragma omp parallel for reduction(+ : sum)
  for (int i = 0; i < 1000; i++) sum += i;

  std::thread t([] {});
  t.join();
  std::printf("%ld %d %d\n", sum, static_cast<int>(r), omp_get_max_threads());
  return 0;
}
