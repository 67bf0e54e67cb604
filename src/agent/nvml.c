#include "agent/nvml.h"

#include "common/log.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Symbol names in the same order as the fields of struct hn_nvml_ops. */
struct sym {
    const char *name;
    const char *alt;
};
#define HN_NVML_SYM(field, sym, alt, ret, args) {sym, alt},
static const struct sym syms[] = {HN_NVML_FUNCS(HN_NVML_SYM)};
#undef HN_NVML_SYM

/* The functions without which there is nothing to collect. */
static const char *const required[] = {"nvmlInit_v2", "nvmlShutdown", "nvmlDeviceGetCount_v2",
                                       "nvmlDeviceGetHandleByIndex_v2"};

static int is_required(const char *name)
{
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
        if (strcmp(required[i], name) == 0)
            return 1;
    }
    return 0;
}

int hn_nvml_open(struct hn_nvml *n, const char *lib, char *err, size_t errsize)
{
    memset(n, 0, sizeof(*n));
    if (!lib || !lib[0])
        lib = "libnvidia-ml.so.1";
    n->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!n->dl) {
        snprintf(err, errsize, "cannot load NVML (%s): %s", lib, dlerror());
        return -ENOENT;
    }
    /* The ops struct is an array of function pointers in syms[] order. */
    void **slots = (void **)&n->ops;
    _Static_assert(sizeof(struct hn_nvml_ops) == sizeof(syms) / sizeof(syms[0]) * sizeof(void *),
                   "ops table and symbol list differ");
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        void *p = dlsym(n->dl, syms[i].name);
        if (!p && syms[i].alt)
            p = dlsym(n->dl, syms[i].alt);
        if (!p) {
            if (is_required(syms[i].name)) {
                snprintf(err, errsize, "%s lacks required symbol %s", lib, syms[i].name);
                dlclose(n->dl);
                n->dl = NULL;
                return -ENOSYS;
            }
            n->missing++;
            hn_info("nvml: %s has no %s; its metrics are not collected", lib, syms[i].name);
        }
        slots[i] = p;
    }
    nvmlReturn_t rc = n->ops.init();
    if (rc != NVML_SUCCESS) {
        snprintf(err, errsize, "nvmlInit_v2 failed: %s", hn_nvml_strerror(n, rc));
        dlclose(n->dl);
        n->dl = NULL;
        return -EIO;
    }
    return 0;
}

void hn_nvml_close(struct hn_nvml *n)
{
    if (!n->dl)
        return;
    n->ops.shutdown();
    dlclose(n->dl);
    n->dl = NULL;
}

const char *hn_nvml_strerror(const struct hn_nvml *n, nvmlReturn_t rc)
{
    static __thread char num[32];
    if (n->ops.error_string) {
        const char *s = n->ops.error_string(rc);
        if (s)
            return s;
    }
    snprintf(num, sizeof(num), "NVML error %d", rc);
    return num;
}
