#include "common/curl_dl.h"

#include "common/util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Symbol names in the order of struct hn_curl_ops' fields. */
static const char *const syms[] = {
    "curl_global_init",   "curl_easy_init",    "curl_easy_setopt",
    "curl_easy_perform",  "curl_easy_getinfo", "curl_easy_cleanup",
    "curl_easy_strerror", "curl_slist_append", "curl_slist_free_all",
};

/* Debian's libcurl4 (OpenSSL) first, then the GnuTLS flavour. */
static const char *const libs[] = {"libcurl.so.4", "libcurl-gnutls.so.4"};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct hn_curl_ops ops;
static int loaded;
static char load_error[256];

static void load(void)
{
    void *dl = NULL;
    for (size_t i = 0; i < HN_ARRAY_LEN(libs) && !dl; i++)
        dl = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        snprintf(load_error, sizeof(load_error), "cannot load libcurl (libcurl.so.4): %s",
                 dlerror());
        return;
    }
    _Static_assert(sizeof(ops) == HN_ARRAY_LEN(syms) * sizeof(void *),
                   "ops table and symbol list differ");
    void **slots = (void **)&ops;
    for (size_t i = 0; i < HN_ARRAY_LEN(syms); i++) {
        slots[i] = dlsym(dl, syms[i]);
        if (!slots[i]) {
            snprintf(load_error, sizeof(load_error), "libcurl lacks %s", syms[i]);
            return;
        }
    }
    if (ops.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(load_error, sizeof(load_error), "curl_global_init failed");
        return;
    }
    /* Kept loaded for the life of the process (curl_global_cleanup is not safe to race). */
    loaded = 1;
}

const struct hn_curl_ops *hn_curl_load(char *err, size_t errsize)
{
    pthread_once(&once, load);
    if (loaded)
        return &ops;
    if (err && errsize)
        snprintf(err, errsize, "%s", load_error);
    return NULL;
}
