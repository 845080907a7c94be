/* ompdpu_device() for ompdpu-train built on the DPU itself (the MPI way's
 * DPU rank): a DPU has no DPUs to offload to, and needs no libompdpu. */
int ompdpu_device(int k) {
  (void)k;
  return -1;
}
