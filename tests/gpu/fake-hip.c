/* fake-hip.c: a stand-in libamdhip64.so with one MI300X-like device,
 * built by tests/0201-gpu.t.  The property struct is filled at an offset
 * of neither ROCm layout, as discovery must not depend on one. */
#include <string.h>

int hipRuntimeGetVersion(int *v) { *v = 60241134; return 0; }
int hipGetDeviceCount(int *n) { *n = 1; return 0; }

int
hipDeviceGetName(char *name, int len, int dev)
{
	(void)dev;
	strncpy(name, "AMD Instinct MI300X", (size_t)len);
	return 0;
}

int
hipDeviceTotalMem(size_t *bytes, int dev)
{
	(void)dev;
	*bytes = (size_t)192 << 30;
	return 0;
}

int
hipDeviceGetAttribute(int *v, int attr, int dev)
{
	(void)dev;
	switch (attr) {
	case 5: *v = 2100000; return 0;     /* clock, kHz */
	case 19: *v = 4194304; return 0;    /* L2 */
	case 63: *v = 304; return 0;        /* CUs */
	case 87: *v = 64; return 0;         /* wavefront */
	case 10002: *v = 65536; return 0;   /* LDS per CU */
	default: return 1;                  /* hipErrorInvalidValue */
	}
}

int
hipGetDevicePropertiesR0600(void *props, int dev)
{
	(void)dev;
	strcpy(props, "AMD Instinct MI300X");
	strcpy((char *)props + 1000, "gfx942:sramecc+:xnack-");
	return 0;
}

const char *hipGetErrorString(int rc) { (void)rc; return "fake error"; }
