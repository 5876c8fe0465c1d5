/* fake-cuda.c: a stand-in libcuda.so.1 with two H100-like devices, built
 * by tests/0201-gpu.t so GPU discovery can be tested on any machine.
 * FAKE_CUDA_INIT sets cuInit's result (100: no device, 999: failure);
 * FAKE_CUDA_THREAD set, cuInit starts a thread of the runtime's own, as
 * the real one does, with the signal mask it finds. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *
runtime_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int
cuInit(unsigned flags)
{
	const char *rc = getenv("FAKE_CUDA_INIT");
	pthread_t t;

	(void)flags;
	if (getenv("FAKE_CUDA_THREAD") && pthread_create(&t, NULL, runtime_thread, NULL) == 0)
		pthread_detach(t);
	return rc ? atoi(rc) : 0;
}

int cuDriverGetVersion(int *v) { *v = 12040; return 0; }
int cuDeviceGetCount(int *n) { *n = 2; return 0; }
int cuDeviceGet(int *dev, int ordinal) { *dev = ordinal; return 0; }

int
cuDeviceGetName(char *name, int len, int dev)
{
	(void)dev;
	strncpy(name, "NVIDIA H100 80GB HBM3", (size_t)len);
	return 0;
}

int
cuDeviceTotalMem_v2(size_t *bytes, int dev)
{
	*bytes = (size_t)85 << 30 | (size_t)dev;
	return 0;
}

int
cuDeviceGetAttribute(int *v, int attr, int dev)
{
	(void)dev;
	switch (attr) {
	case 10: *v = 32; return 0;        /* warp size */
	case 13: *v = 1980000; return 0;   /* clock, kHz */
	case 16: *v = 132; return 0;       /* SMs */
	case 36: *v = 2619000; return 0;   /* memory clock, kHz */
	case 37: *v = 5120; return 0;      /* bus width, bits */
	case 38: *v = 52428800; return 0;  /* L2 */
	case 75: *v = 9; return 0;
	case 76: *v = 0; return 0;
	default: return 1;                 /* CUDA_ERROR_INVALID_VALUE */
	}
}

int
cuGetErrorName(int rc, const char **s)
{
	*s = rc == 999 ? "CUDA_ERROR_UNKNOWN" : "CUDA_ERROR_OTHER";
	return 0;
}
