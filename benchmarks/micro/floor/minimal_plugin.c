/* A minimal in-process libomptarget plugin: device memory is host memory
 * (malloc), transfers are memcpy, and a launch returns at once without
 * calling the kernel. What a region costs with it is libomptarget's own
 * bookkeeping (and the compiler's glue), nothing of a device.
 *
 * Built for libomptarget 14/15 by default; -DLIBOMPTARGET_16 for 16/17, whose
 * plugins launch with __tgt_rtl_launch_kernel and free with a kind. The
 * structures are ompdpu's plugin's own (plugin-dpu/abi/llvm14/omptarget_abi.h).
 */
#include "omptarget_abi.h"

#include <stdlib.h>
#include <string.h>

static struct __tgt_target_table Table;

int32_t __tgt_rtl_is_valid_binary(struct __tgt_device_image *Image) {
  const unsigned char *Elf = Image->ImageStart;
  /* An ELF image of this machine (x86_64: e_machine 62). */
  return Elf[0] == 0x7f && Elf[1] == 'E' && Elf[18] == 62;
}
int32_t __tgt_rtl_number_of_devices(void) { return 1; }
int32_t __tgt_rtl_init_device(int32_t Device) { return 0; }
int64_t __tgt_rtl_init_requires(int64_t Flags) { return Flags; }
struct __tgt_target_table *
__tgt_rtl_load_binary(int32_t Device, struct __tgt_device_image *Image) {
  Table.EntriesBegin = Image->EntriesBegin;
  Table.EntriesEnd = Image->EntriesEnd;
  return &Table;
}
void *__tgt_rtl_data_alloc(int32_t Device, int64_t Size, void *HostPtr,
                           int32_t Kind) {
  return malloc(Size ? Size : 1);
}
int32_t __tgt_rtl_data_submit(int32_t Device, void *Dst, void *Src,
                              int64_t Size) {
  memcpy(Dst, Src, Size);
  return 0;
}
int32_t __tgt_rtl_data_retrieve(int32_t Device, void *Dst, void *Src,
                                int64_t Size) {
  memcpy(Dst, Src, Size);
  return 0;
}
#ifdef LIBOMPTARGET_16
int32_t __tgt_rtl_data_delete(int32_t Device, void *Ptr, int32_t Kind) {
  free(Ptr);
  return 0;
}
int32_t __tgt_rtl_launch_kernel(int32_t Device, void *Entry, void **Args,
                                ptrdiff_t *Offsets, void *KernelArgs,
                                void *AsyncInfo) {
  return 0;
}
#else
int32_t __tgt_rtl_data_delete(int32_t Device, void *Ptr) {
  free(Ptr);
  return 0;
}
int32_t __tgt_rtl_run_target_region(int32_t Device, void *Entry, void **Args,
                                    ptrdiff_t *Offsets, int32_t NumArgs) {
  return 0;
}
int32_t __tgt_rtl_run_target_team_region(int32_t Device, void *Entry,
                                         void **Args, ptrdiff_t *Offsets,
                                         int32_t NumArgs, int32_t NumTeams,
                                         int32_t ThreadLimit,
                                         uint64_t LoopTripCount) {
  return 0;
}
#endif
