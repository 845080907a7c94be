/*===- no_dpu_notice.c - Say so when a DPU program runs without DPUs ------===//
 *
 * Linked into every program ompdpu-cc links. Without ompdpu's plugin (the
 * program run as ./app, not through `ompdpu run`) or with no DPU configured,
 * libomptarget runs target regions on the host (or LLVM's host plugin)
 * without a word; this constructor says so once. It runs after libomptarget
 * loaded its plugins: in LLVM 14 and 15 the program's own offload
 * registration (an earlier constructor) loads them, in 16 and later
 * libomptarget's constructor does, and 19's plugin is libomptarget itself.
 * OMPDPU_NOTICE=0 silences it.
 *
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef int (*NumDevicesFn)(void);

struct Found {
  int Plugins; /* ompdpu plugin copies loaded */
  int Devices; /* their devices */
};

static void count(void *Handle, struct Found *F) {
  NumDevicesFn N = (NumDevicesFn)dlsym(Handle, "__ompdpu_plugin_num_devices");
  if (N) {
    ++F->Plugins;
    F->Devices += N();
  }
}

/* Drop-in plugins are loaded with local scope: ask each loaded object. */
static int visit(struct dl_phdr_info *Info, size_t Size, void *Data) {
  (void)Size;
  if (!Info->dlpi_name || !strstr(Info->dlpi_name, "libomptarget"))
    return 0;
  void *H = dlopen(Info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  if (H) {
    count(H, (struct Found *)Data);
    dlclose(H); /* drops only the reference NOLOAD added */
  }
  return 0;
}

__attribute__((constructor)) static void ompdpuNoDpuNotice(void) {
  const char *Off = getenv("OMPDPU_NOTICE");
  const char *Policy = getenv("OMP_TARGET_OFFLOAD");
  if ((Off && !strcmp(Off, "0")) || (Policy && !strcasecmp(Policy, "disabled")))
    return;
  struct Found F = {0, 0};
  dl_iterate_phdr(visit, &F);
  if (F.Devices > 0)
    return;
  const char *Prog = program_invocation_name;
  if (F.Plugins)
    fprintf(stderr,
            "ompdpu note: %s runs its target regions on the host, not a DPU: "
            "no DPU is configured (`ompdpu info` says where it looked; "
            "OMPDPU_NOTICE=0: no such note)\n",
            Prog);
  else
    fprintf(stderr,
            "ompdpu note: %s runs its target regions on the host, not a DPU: "
            "ompdpu's plugin is not loaded (run it as `ompdpu run -- %s`; "
            "OMPDPU_NOTICE=0: no such note)\n",
            Prog, Prog);
}
