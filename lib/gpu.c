/* gpu.c: list the machine's GPUs through the vendor runtimes, loaded with
 * dlopen so that one build runs with ROCm, CUDA, both or neither.
 *
 * Only attribute queries are used where the runtimes offer them: their
 * numbers are part of the ABI, while the property structs changed layout
 * between releases.  The attribute numbers below are those of the CUDA
 * driver API (cuda.h) and of HIP's hipDeviceAttribute_t, which has kept
 * the same numbers from ROCm 5.0 through 6.x (entries that went out of
 * use were renamed "Unused" in place). */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "util.h"

/* The loaders reach the functions through dlsym; POSIX guarantees that a
 * data pointer from dlsym converts to a function pointer this way. */
#define LOAD(lib, var, name) (*(void **)(&(var)) = dlsym((lib), (name)))

/* CUDA driver API: CUresult 0 is success, 100 CUDA_ERROR_NO_DEVICE. */
enum {
	CU_ATTR_CLOCK_RATE = 13,
	CU_ATTR_MULTIPROCESSOR_COUNT = 16,
	CU_ATTR_WARP_SIZE = 10,
	CU_ATTR_MEMORY_CLOCK_RATE = 36,
	CU_ATTR_GLOBAL_MEMORY_BUS_WIDTH = 37,
	CU_ATTR_L2_CACHE_SIZE = 38,
	CU_ATTR_CC_MAJOR = 75,
	CU_ATTR_CC_MINOR = 76,
	CU_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
	CU_ERROR_NO_DEVICE = 100,
};

/* HIP: hipError_t 0 is success, 100 hipErrorNoDevice. */
enum {
	HIP_ATTR_CLOCK_RATE = 5,
	HIP_ATTR_L2_CACHE_SIZE = 19,
	HIP_ATTR_MEMORY_BUS_WIDTH = 59,
	HIP_ATTR_MEMORY_CLOCK_RATE = 60,
	HIP_ATTR_MULTIPROCESSOR_COUNT = 63,
	HIP_ATTR_WARP_SIZE = 87,
	HIP_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 10002,
	HIP_ERROR_NO_DEVICE = 100,
};

/* The property struct is only read for gcnArchName, the one fact no
 * attribute gives.  Its layout differs between ROCm 5 (hipDeviceProp_t)
 * and ROCm 6 (hipDeviceProp_tR0600); both are well under this size. */
#define HIP_PROPS_BYTES 16384

static int
vfail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
vfail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static void *
open_first(const char *const *names)
{
	void *lib;

	for (; *names; names++)
		if ((lib = dlopen(*names, RTLD_NOW | RTLD_LOCAL)))
			return lib;
	return NULL;
}

/* Parse one comma-separated *_VISIBLE_DEVICES list and return entry pos
 * as a number: -1 when it is not a plain number or is missing. */
static int
list_entry(const char *list, int pos)
{
	const char *p = list;
	char *end;
	long v;

	for (int i = 0; i < pos; i++) {
		if (!(p = strchr(p, ',')))
			return -1;
		p++;
	}
	v = strtol(p, &end, 10);
	if (end == p || (*end && *end != ',') || v < 0 || v > 1 << 20)
		return -1;
	return (int)v;
}

/* Apply one variable on top of the mapping so far. */
static int
through(const char *var, int idx)
{
	const char *list = getenv(var);

	if (idx < 0 || !list)
		return idx;
	return list_entry(list, idx);
}

int
geak_gpu_physical_index(const char *vendor, int visible)
{
	if (visible < 0)
		return -1;
	if (strcmp(vendor, "nvidia") == 0)
		return through("CUDA_VISIBLE_DEVICES", visible);
	/* ROCm: HIP_VISIBLE_DEVICES (or CUDA_VISIBLE_DEVICES, which HIP
	 * accepts as its alias) selects among what ROCR_VISIBLE_DEVICES left. */
	const char *hip = getenv("HIP_VISIBLE_DEVICES") ? "HIP_VISIBLE_DEVICES"
		: "CUDA_VISIBLE_DEVICES";
	return through("ROCR_VISIBLE_DEVICES", through(hip, visible));
}

static void
set_int(json_t *gpu, const char *key, int ok, long long v)
{
	json_object_set_new(gpu, key, ok ? json_integer(v) : json_null());
}

static json_t *
new_gpu(const char *vendor, int visible)
{
	json_t *gpu = json_object();
	int phys = geak_gpu_physical_index(vendor, visible);

	set_int(gpu, "index", phys >= 0, phys);
	json_object_set_new(gpu, "vendor", json_string(vendor));
	return gpu;
}

/* ---- NVIDIA: the driver API in libcuda.so.1 ---- */

struct cuda {
	int (*init)(unsigned);
	int (*driver_version)(int *);
	int (*count)(int *);
	int (*get)(int *, int);
	int (*name)(char *, int, int);
	int (*total_mem)(size_t *, int);
	int (*attr)(int *, int, int);
	int (*error_name)(int, const char **);
};

static const char *
cuda_error(const struct cuda *cu, int rc)
{
	const char *s = NULL;

	if (cu->error_name && cu->error_name(rc, &s) == 0 && s)
		return s;
	return "unknown error";
}

/* One attribute into gpu[key], null when the driver does not answer. */
static void
cuda_attr(const struct cuda *cu, json_t *gpu, const char *key, int attr, int dev)
{
	int v = 0, ok = cu->attr(&v, attr, dev) == 0;

	set_int(gpu, key, ok, v);
}

static json_t *
cuda_device(const struct cuda *cu, int ordinal, const char *driver)
{
	int dev, major, minor, mem_ok;
	char name[256];
	size_t mem = 0;
	json_t *gpu = new_gpu("nvidia", ordinal);

	if (cu->get(&dev, ordinal) != 0)
		dev = ordinal;
	if (cu->name(name, sizeof name, dev) != 0)
		name[0] = '\0';
	name[sizeof name - 1] = '\0';
	json_object_set_new(gpu, "name", *name ? json_string(name) : json_null());
	if (cu->attr(&major, CU_ATTR_CC_MAJOR, dev) == 0 &&
	    cu->attr(&minor, CU_ATTR_CC_MINOR, dev) == 0) {
		char arch[32];
		snprintf(arch, sizeof arch, "sm_%d%d", major, minor);
		json_object_set_new(gpu, "arch", json_string(arch));
	} else {
		json_object_set_new(gpu, "arch", json_null());
	}
	cuda_attr(cu, gpu, "compute_units", CU_ATTR_MULTIPROCESSOR_COUNT, dev);
	mem_ok = cu->total_mem(&mem, dev) == 0;
	set_int(gpu, "memory_bytes", mem_ok, (long long)mem);
	cuda_attr(cu, gpu, "l2_bytes", CU_ATTR_L2_CACHE_SIZE, dev);
	cuda_attr(cu, gpu, "warp_size", CU_ATTR_WARP_SIZE, dev);
	cuda_attr(cu, gpu, "clock_khz", CU_ATTR_CLOCK_RATE, dev);
	set_int(gpu, "visible_index", 1, ordinal);
	cuda_attr(cu, gpu, "shared_bytes_per_cu", CU_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, dev);
	cuda_attr(cu, gpu, "memory_bus_bits", CU_ATTR_GLOBAL_MEMORY_BUS_WIDTH, dev);
	cuda_attr(cu, gpu, "memory_clock_khz", CU_ATTR_MEMORY_CLOCK_RATE, dev);
	json_object_set_new(gpu, "driver", driver ? json_string(driver) : json_null());
	return gpu;
}

static int
cuda_list(json_t *out, char *err, size_t errlen)
{
	static const char *const names[] = { "libcuda.so.1", "libcuda.so", NULL };
	struct cuda cu = { 0 };
	void *lib = open_first(names);
	int rc, n, ver;
	char driver[32], *drv = NULL;

	if (!lib)
		return 0;
	LOAD(lib, cu.init, "cuInit");
	LOAD(lib, cu.driver_version, "cuDriverGetVersion");
	LOAD(lib, cu.count, "cuDeviceGetCount");
	LOAD(lib, cu.get, "cuDeviceGet");
	LOAD(lib, cu.name, "cuDeviceGetName");
	LOAD(lib, cu.total_mem, "cuDeviceTotalMem_v2");
	LOAD(lib, cu.attr, "cuDeviceGetAttribute");
	LOAD(lib, cu.error_name, "cuGetErrorName");
	if (!cu.init || !cu.count || !cu.get || !cu.name || !cu.total_mem || !cu.attr)
		return vfail(err, errlen, "libcuda.so.1: a driver API function is missing");
	rc = cu.init(0);
	if (rc == CU_ERROR_NO_DEVICE)
		return 0;
	if (rc != 0)
		return vfail(err, errlen, "cuInit: %s (%d)", cuda_error(&cu, rc), rc);
	if ((rc = cu.count(&n)) != 0)
		return vfail(err, errlen, "cuDeviceGetCount: %s (%d)", cuda_error(&cu, rc), rc);
	if (cu.driver_version && cu.driver_version(&ver) == 0) {
		snprintf(driver, sizeof driver, "cuda %d.%d", ver / 1000, ver % 1000 / 10);
		drv = driver;
	}
	for (int i = 0; i < n; i++)
		json_array_append_new(out, cuda_device(&cu, i, drv));
	return 0;
}

/* ---- AMD: the HIP runtime in libamdhip64.so ---- */

struct hip {
	int (*runtime_version)(int *);
	int (*count)(int *);
	int (*name)(char *, int, int);
	int (*total_mem)(size_t *, int);
	int (*attr)(int *, int, int);
	int (*props)(void *, int);
	const char *(*error_string)(int);
};

static const char *
hip_error(const struct hip *hip, int rc)
{
	const char *s = hip->error_string ? hip->error_string(rc) : NULL;

	return s ? s : "unknown error";
}

/* gcnArchName ("gfx942:sramecc+:xnack-") is the only string in the
 * struct that starts with "gfx" (name holds the marketing name), and in
 * both layouts it starts on a 4-byte boundary after the 256-byte name.
 * Finding it by content keeps this independent of the struct's layout.
 * The arch is the part before the first ':'. */
static int
find_gcn_arch(const unsigned char *props, size_t len, char *arch, size_t archlen)
{
	for (size_t off = 256; off + 4 <= len; off += 4) {
		const unsigned char *p = props + off;
		size_t n = 0;

		if (memcmp(p, "gfx", 3) != 0)
			continue;
		while (off + n < len && n + 1 < archlen &&
		       ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9')))
			n++;
		if (n > 3 && (off + n == len || p[n] == ':' || p[n] == '\0')) {
			memcpy(arch, p, n);
			arch[n] = '\0';
			return 0;
		}
	}
	return -1;
}

static void
hip_arch(const struct hip *hip, json_t *gpu, int dev)
{
	unsigned char *props;
	char arch[64];

	if (!hip->props) {
		json_object_set_new(gpu, "arch", json_null());
		return;
	}
	props = geak_xcalloc(1, HIP_PROPS_BYTES);
	if (hip->props(props, dev) == 0 &&
	    find_gcn_arch(props, HIP_PROPS_BYTES, arch, sizeof arch) == 0)
		json_object_set_new(gpu, "arch", json_string(arch));
	else
		json_object_set_new(gpu, "arch", json_null());
	free(props);
}

static void
hip_attr(const struct hip *hip, json_t *gpu, const char *key, int attr, int dev)
{
	int v = 0, ok = hip->attr(&v, attr, dev) == 0;

	set_int(gpu, key, ok, v);
}

static json_t *
hip_device(const struct hip *hip, int dev, const char *driver)
{
	int mem_ok;
	char name[256];
	size_t mem = 0;
	json_t *gpu = new_gpu("amd", dev);

	if (hip->name(name, sizeof name, dev) != 0)
		name[0] = '\0';
	name[sizeof name - 1] = '\0';
	json_object_set_new(gpu, "name", *name ? json_string(name) : json_null());
	hip_arch(hip, gpu, dev);
	hip_attr(hip, gpu, "compute_units", HIP_ATTR_MULTIPROCESSOR_COUNT, dev);
	mem_ok = hip->total_mem(&mem, dev) == 0;
	set_int(gpu, "memory_bytes", mem_ok, (long long)mem);
	hip_attr(hip, gpu, "l2_bytes", HIP_ATTR_L2_CACHE_SIZE, dev);
	hip_attr(hip, gpu, "warp_size", HIP_ATTR_WARP_SIZE, dev);
	hip_attr(hip, gpu, "clock_khz", HIP_ATTR_CLOCK_RATE, dev);
	set_int(gpu, "visible_index", 1, dev);
	hip_attr(hip, gpu, "shared_bytes_per_cu", HIP_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, dev);
	hip_attr(hip, gpu, "memory_bus_bits", HIP_ATTR_MEMORY_BUS_WIDTH, dev);
	hip_attr(hip, gpu, "memory_clock_khz", HIP_ATTR_MEMORY_CLOCK_RATE, dev);
	json_object_set_new(gpu, "driver", driver ? json_string(driver) : json_null());
	return gpu;
}

static void *
hip_open(void)
{
	static const char *const names[] = {
		"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
		"libamdhip64.so.5", NULL,
	};
	const char *rocm = getenv("ROCM_PATH");
	void *lib = open_first(names);

	/* ROCm's own directory is not always in the loader's search path. */
	if (!lib) {
		char *path = geak_xasprintf("%s/lib/libamdhip64.so",
			rocm && *rocm ? rocm : "/opt/rocm");
		lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		free(path);
	}
	return lib;
}

static int
hip_list(json_t *out, char *err, size_t errlen)
{
	struct hip hip = { 0 };
	void *lib = hip_open();
	int rc, n, ver;
	char driver[32], *drv = NULL;

	if (!lib)
		return 0;
	LOAD(lib, hip.runtime_version, "hipRuntimeGetVersion");
	LOAD(lib, hip.count, "hipGetDeviceCount");
	LOAD(lib, hip.name, "hipDeviceGetName");
	LOAD(lib, hip.total_mem, "hipDeviceTotalMem");
	LOAD(lib, hip.attr, "hipDeviceGetAttribute");
	LOAD(lib, hip.error_string, "hipGetErrorString");
	/* ROCm 6 exports the new layout under its versioned name. */
	if (!LOAD(lib, hip.props, "hipGetDevicePropertiesR0600"))
		LOAD(lib, hip.props, "hipGetDeviceProperties");
	if (!hip.count || !hip.name || !hip.total_mem || !hip.attr)
		return vfail(err, errlen, "libamdhip64.so: a HIP runtime function is missing");
	rc = hip.count(&n);
	if (rc == HIP_ERROR_NO_DEVICE)
		return 0;
	if (rc != 0)
		return vfail(err, errlen, "hipGetDeviceCount: %s (%d)", hip_error(&hip, rc), rc);
	if (hip.runtime_version && hip.runtime_version(&ver) == 0) {
		/* HIP_VERSION = major * 10^7 + minor * 10^5 + patch */
		snprintf(driver, sizeof driver, "hip %d.%d", ver / 10000000, ver / 100000 % 100);
		drv = driver;
	}
	for (int i = 0; i < n; i++)
		json_array_append_new(out, hip_device(&hip, i, drv));
	return 0;
}

int
geak_gpu_list(json_t **out, char *err, size_t errlen)
{
	json_t *list = json_array();

	*out = NULL;
	if (!list)
		return vfail(err, errlen, "json: out of memory");
	if (hip_list(list, err, errlen) < 0 || cuda_list(list, err, errlen) < 0) {
		json_decref(list);
		return -1;
	}
	*out = list;
	return 0;
}
