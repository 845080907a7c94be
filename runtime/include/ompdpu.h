/*===- ompdpu.h - Public API of ompdpu --------------------------*- C -*-===*\
 *
 * ompdpu makes NVIDIA BlueField DPUs OpenMP devices. Programs need no
 * DPU-specific API to offload; this header only answers "which OpenMP device
 * numbers are DPUs", so that programs can write
 *
 *     #pragma omp target device(ompdpu_device(0))
 *
 * even when the binary also targets other devices (GPUs). Link -lompdpu.
\*===----------------------------------------------------------------------===*/
#ifndef OMPDPU_H
#define OMPDPU_H

#ifdef __cplusplus
extern "C" {
#endif

/** Number of DPUs that OpenMP can offload to in this process. */
int ompdpu_num_devices(void);

/** OpenMP device number of the k-th DPU (k from 0), or -1 if there is no
 *  such DPU. */
int ompdpu_device(int k);

/** 1 if OpenMP device number dev is a DPU, else 0. */
int ompdpu_is_dpu(int dev);

/** The k-th DPU's server as "HOST:PORT" (the devices file's or
 *  OMPDPU_DEVICES' text), or NULL if there is no such DPU or the plugin
 *  cannot say (LLVM 19's built-in plugin). Valid for the process's life. */
const char *ompdpu_device_address(int k);

#ifdef __cplusplus
}
#endif

#endif /* OMPDPU_H */
