/*
 * curl_dl.h - libcurl loaded at run time, as NVML is (agent/nvml.h): an ops table filled by
 * dlsym from the library's names.
 *
 * Only the agent's push (agent/push.c) and the CLI (cli/client.c) need an HTTP client. Linking
 * libcurl would map it, OpenSSL, Kerberos and the rest of its dependencies into every houston
 * process, the agent included, whose resident memory budget is 8 MiB; loading it on first use
 * keeps an agent that does not push at its small size. hn_curl_load() loads once (thread-safe)
 * and returns the table, or NULL with a reason in err when no libcurl is installed.
 */
#ifndef HN_CURL_DL_H
#define HN_CURL_DL_H

#include <curl/curl.h>
#include <stddef.h>

struct hn_curl_ops {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
    CURLcode (*easy_perform)(CURL *h);
    CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
    void (*easy_cleanup)(CURL *h);
    const char *(*easy_strerror)(CURLcode rc);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
    void (*slist_free_all)(struct curl_slist *list);
};

/* The loaded table (and curl_global_init done), or NULL with a reason in err. */
const struct hn_curl_ops *hn_curl_load(char *err, size_t errsize);

#endif
