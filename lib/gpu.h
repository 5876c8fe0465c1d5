/* gpu.h: the machine's GPUs, found through the vendor runtimes.
 *
 * The runtimes (libamdhip64.so for AMD, libcuda.so.1 for NVIDIA) are
 * opened with dlopen at run time, so one build runs on machines with
 * either, both or neither; linking this file needs only -ldl (part of
 * libc since glibc 2.34). */
#ifndef GEAK_GPU_H
#define GEAK_GPU_H

#include <stddef.h>
#include <jansson.h>

/* Fill *out with a new JSON array, one object per GPU the process may
 * use, in the order the runtime numbers them:
 *
 *   {index, vendor ("amd"|"nvidia"), name, arch ("gfx942", "sm_90"),
 *    compute_units, memory_bytes, l2_bytes, warp_size, clock_khz,
 *    visible_index}
 *
 * plus driver ("cuda 12.4", "hip 6.2"), shared_bytes_per_cu,
 * memory_bus_bits and memory_clock_khz.  visible_index is the number the
 * process uses (the runtimes apply CUDA_VISIBLE_DEVICES,
 * HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES themselves); index is the
 * physical number, mapped back through those variables, or null when
 * they name devices by UUID.  A field the runtime does not report is
 * null.  No runtime or no device gives an empty array and returns 0.
 * Returns -1 with "what: why" in err only when a runtime is present but
 * fails in a way other than "no device"; *out is then NULL.  The runtime
 * libraries stay loaded: unloading them at run time is not safe. */
int geak_gpu_list(json_t **out, char *err, size_t errlen);

/* The physical index of the process's device number visible for vendor
 * "nvidia" or "amd", by the *_VISIBLE_DEVICES variables in force; -1
 * when they name it otherwise than by number or do not list it. */
int geak_gpu_physical_index(const char *vendor, int visible);

#endif
