/* prov_gpu.c: the GPU and CUDA part of env.json (see provenance.h). NVML, libcuda and libcudart
 * are loaded with dlopen so llmprof runs (and says why there is no GPU) on machines without a
 * driver; nothing here needs the CUDA toolkit at build time. NVML has no SM count, so that comes
 * from libcuda's cuDeviceGetAttribute for the device with the same PCI bus id. */
#include "collect/provenance.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The few NVML declarations used here (nvml.h is not needed to build). */
typedef int nvml_return;
typedef struct nvml_device_st *nvml_device;
struct nvml_memory {
	unsigned long long total, free, used;
};
struct nvml_pci_info {
	char bus_id_legacy[16];
	unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { CU_ATTR_CC_MAJOR = 75, CU_ATTR_CC_MINOR = 76, CU_ATTR_SM_COUNT = 16 };

struct nvml {
	void *lib;
	nvml_return (*init)(void);
	nvml_return (*shutdown)(void);
	const char *(*error_string)(nvml_return);
	nvml_return (*driver_version)(char *, unsigned);
	nvml_return (*count)(unsigned *);
	nvml_return (*by_index)(unsigned, nvml_device *);
	nvml_return (*name)(nvml_device, char *, unsigned);
	nvml_return (*uuid)(nvml_device, char *, unsigned);
	nvml_return (*memory)(nvml_device, struct nvml_memory *);
	nvml_return (*clock)(nvml_device, int, unsigned *);
	nvml_return (*max_clock)(nvml_device, int, unsigned *);
	nvml_return (*cc)(nvml_device, int *, int *);
	nvml_return (*pci)(nvml_device, struct nvml_pci_info *);
};

struct cuda {
	void *lib;
	int ready;   /* cuInit succeeded */
	int (*init)(unsigned);
	int (*driver_version)(int *);
	int (*by_pci)(int *, const char *);
	int (*attr)(int *, int, int);
};

/* dlsym into a function pointer without a cast between object and function pointers */
static void *sym(void *lib, const char *name, void *fn_ptr_addr)
{
	void *p = dlsym(lib, name);
	memcpy(fn_ptr_addr, &p, sizeof(p));
	return p;
}
#define SYM(lib, field, name) sym((lib), (name), &(field))

static int nvml_open(struct nvml *n, char *reason, size_t cap)
{
	nvml_return rc;
	memset(n, 0, sizeof(*n));
	n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		snprintf(reason, cap, "libnvidia-ml.so.1 not found (no NVIDIA driver on this machine)");
		return -1;
	}
	if (!SYM(n->lib, n->init, "nvmlInit_v2") || !SYM(n->lib, n->shutdown, "nvmlShutdown") ||
	    !SYM(n->lib, n->count, "nvmlDeviceGetCount_v2") ||
	    !SYM(n->lib, n->by_index, "nvmlDeviceGetHandleByIndex_v2")) {
		snprintf(reason, cap, "libnvidia-ml.so.1 lacks nvmlInit_v2 or device enumeration");
		dlclose(n->lib);
		return -1;
	}
	SYM(n->lib, n->error_string, "nvmlErrorString");
	SYM(n->lib, n->driver_version, "nvmlSystemGetDriverVersion");
	SYM(n->lib, n->name, "nvmlDeviceGetName");
	SYM(n->lib, n->uuid, "nvmlDeviceGetUUID");
	SYM(n->lib, n->memory, "nvmlDeviceGetMemoryInfo");
	SYM(n->lib, n->clock, "nvmlDeviceGetClockInfo");
	SYM(n->lib, n->max_clock, "nvmlDeviceGetMaxClockInfo");
	SYM(n->lib, n->cc, "nvmlDeviceGetCudaComputeCapability");
	SYM(n->lib, n->pci, "nvmlDeviceGetPciInfo_v3");
	rc = n->init();
	if (rc != 0) {
		snprintf(reason, cap, "nvmlInit failed: %s", n->error_string ? n->error_string(rc) : "error");
		dlclose(n->lib);
		return -1;
	}
	return 0;
}

static void cuda_open(struct cuda *c)
{
	memset(c, 0, sizeof(*c));
	c->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!c->lib)
		return;
	SYM(c->lib, c->init, "cuInit");
	SYM(c->lib, c->driver_version, "cuDriverGetVersion");
	SYM(c->lib, c->by_pci, "cuDeviceGetByPCIBusId");
	SYM(c->lib, c->attr, "cuDeviceGetAttribute");
	c->ready = c->init && c->init(0) == 0;
}

static json_t *mhz(struct nvml *n, nvml_device d, int which, int max)
{
	unsigned v = 0;
	nvml_return (*fn)(nvml_device, int, unsigned *) = max ? n->max_clock : n->clock;
	return fn && fn(d, which, &v) == 0 ? json_integer(v) : json_null();
}

static json_t *one_gpu(struct nvml *n, struct cuda *c, unsigned i)
{
	nvml_device d;
	char name[128] = "", uuid[128] = "", bus[32] = "";
	struct nvml_memory mem;
	union {
		struct nvml_pci_info info;
		char pad[512];  /* room should a newer NVML write a longer struct */
	} pci;
	int major = -1, minor = -1, dev, sm = -1;
	json_t *g;
	if (n->by_index(i, &d) != 0)
		return json_pack("{s:i, s:s}", "index", (int)i, "error", "nvmlDeviceGetHandleByIndex failed");
	g = json_pack("{s:i}", "index", (int)i);
	if (n->name && n->name(d, name, sizeof(name)) == 0)
		json_object_set_new(g, "name", json_string(name));
	if (n->uuid && n->uuid(d, uuid, sizeof(uuid)) == 0)
		json_object_set_new(g, "uuid", json_string(uuid));
	memset(&pci, 0, sizeof(pci));
	if (n->pci && n->pci(d, &pci.info) == 0) {
		snprintf(bus, sizeof(bus), "%04x:%02x:%02x.0", pci.info.domain, pci.info.bus, pci.info.device);
		json_object_set_new(g, "pci_bus_id", json_string(bus));
	}
	if (n->memory && n->memory(d, &mem) == 0)
		json_object_set_new(g, "memory_total_bytes", json_integer((json_int_t)mem.total));
	if (n->cc && n->cc(d, &major, &minor) == 0) {
		char cc[16];
		snprintf(cc, sizeof(cc), "%d.%d", major, minor);
		json_object_set_new(g, "compute_capability", json_string(cc));
	}
	if (c->ready && bus[0] && c->by_pci && c->attr && c->by_pci(&dev, bus) == 0 &&
	    c->attr(&sm, CU_ATTR_SM_COUNT, dev) == 0)
		json_object_set_new(g, "sm_count", json_integer(sm));
	else
		json_object_set_new(g, "sm_count", json_null());
	json_object_set_new(g, "sm_clock_mhz", mhz(n, d, NVML_CLOCK_SM, 0));
	json_object_set_new(g, "sm_clock_max_mhz", mhz(n, d, NVML_CLOCK_SM, 1));
	json_object_set_new(g, "mem_clock_mhz", mhz(n, d, NVML_CLOCK_MEM, 0));
	json_object_set_new(g, "mem_clock_max_mhz", mhz(n, d, NVML_CLOCK_MEM, 1));
	return g;
}

static json_t *runtime_version(void)
{
	static const char *const names[] = { "libcudart.so", "libcudart.so.13", "libcudart.so.12" };
	size_t i;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		int (*get)(int *) = NULL, v = 0;
		char text[32];
		if (!lib)
			continue;
		sym(lib, "cudaRuntimeGetVersion", &get);
		if (get && get(&v) == 0) {
			snprintf(text, sizeof(text), "%d.%d", v / 1000, (v % 1000) / 10);
			dlclose(lib);
			return json_pack("{s:s, s:s}", "version", text, "library", names[i]);
		}
		dlclose(lib);
	}
	return json_pack("{s:n, s:s}", "version", "reason",
		"no libcudart on the library path of llmprof (the workload may bring its own)");
}

int lp_prov_gpus(json_t *env, struct lp_err *err)
{
	struct nvml n;
	struct cuda c;
	char reason[256] = "";
	json_t *gpus = json_array(), *cuda = json_object();
	unsigned count = 0, i;
	int drv = 0;
	if (!gpus || !cuda) {
		json_decref(gpus);
		json_decref(cuda);
		return lp_oom(err);
	}
	cuda_open(&c);
	if (nvml_open(&n, reason, sizeof(reason)) == 0) {
		char version[96];
		if (n.driver_version && n.driver_version(version, sizeof(version)) == 0)
			json_object_set_new(cuda, "nvidia_driver_version", json_string(version));
		if (n.count(&count) != 0)
			snprintf(reason, sizeof(reason), "nvmlDeviceGetCount failed");
		else if (count == 0)
			snprintf(reason, sizeof(reason), "NVML sees no GPU");
		for (i = 0; i < count && i < 64; i++)
			json_array_append_new(gpus, one_gpu(&n, &c, i));
		n.shutdown();
		dlclose(n.lib);
	}
	if (c.driver_version && c.driver_version(&drv) == 0) {
		char text[32];
		snprintf(text, sizeof(text), "%d.%d", drv / 1000, (drv % 1000) / 10);
		json_object_set_new(cuda, "driver_api_version", json_string(text));
	} else {
		json_object_set_new(cuda, "driver_api_version", json_null());
		json_object_set_new(cuda, "driver_reason", json_string(c.lib ?
			"cuDriverGetVersion failed" : "libcuda.so.1 not found"));
	}
	json_object_set_new(cuda, "runtime", runtime_version());
	if (c.lib)
		dlclose(c.lib);
	json_object_set_new(env, "gpus", gpus);
	if (reason[0])
		json_object_set_new(env, "gpus_reason", json_string(reason));
	json_object_set_new(env, "cuda", cuda);
	return 0;
}
