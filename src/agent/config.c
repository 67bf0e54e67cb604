#include "agent/config.h"

#include "common/util.h"
#include "common/xid.h"
#include "houston/step.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void hn_agent_config_defaults(struct hn_agent_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    hn_strlcpy(cfg->listen, "127.0.0.1:9400", sizeof(cfg->listen));
    hn_strlcpy(cfg->nvml_lib, "libnvidia-ml.so.1", sizeof(cfg->nvml_lib));
    hn_strlcpy(cfg->sysfs_root, "/sys", sizeof(cfg->sysfs_root));
    hn_strlcpy(cfg->proc_root, "/proc", sizeof(cfg->proc_root));
    hn_strlcpy(cfg->kmsg, "/dev/kmsg", sizeof(cfg->kmsg));
    hn_strlcpy(cfg->step_socket, HN_STEP_SOCKET_DEFAULT, sizeof(cfg->step_socket));
    hn_strlcpy(cfg->step_subuid_file, "/etc/subuid", sizeof(cfg->step_subuid_file));
    hn_strlcpy(cfg->xid_catalog, hn_xid_default_catalog(), sizeof(cfg->xid_catalog));
    if (gethostname(cfg->hostname, sizeof(cfg->hostname)) != 0)
        hn_strlcpy(cfg->hostname, "localhost", sizeof(cfg->hostname));
    cfg->hostname[sizeof(cfg->hostname) - 1] = '\0';
    cfg->interval = 10.0;
    cfg->push_queue = 360;
}

/* A controller base URL: http:// or https://, a host, no blanks, control characters, query or
 * fragment. Trailing '/' are removed, since "/v1/ingest" is appended. "" turns pushing off. */
static int set_controller(struct hn_agent_config *cfg, const char *value, char *err,
                          unsigned errsize)
{
    char url[sizeof(cfg->controller)];
    if (hn_strlcpy(url, value, sizeof(url)) >= sizeof(url)) {
        snprintf(err, errsize, "controller: value longer than %zu bytes", sizeof(url) - 1);
        return -1;
    }
    size_t len = strlen(url);
    while (len > 0 && url[len - 1] == '/')
        url[--len] = '\0';
    if (len == 0) {
        cfg->controller[0] = '\0';
        return 0;
    }
    const char *host = NULL;
    if (strncmp(url, "http://", 7) == 0)
        host = url + 7;
    else if (strncmp(url, "https://", 8) == 0)
        host = url + 8;
    int ok = host && *host && *host != '/' && *host != ':';
    for (const char *c = url; ok && *c; c++)
        ok = (unsigned char)*c > ' ' && *c != 0x7f && *c != '?' && *c != '#';
    if (!ok) {
        snprintf(err, errsize,
                 "controller: '%s' is not a URL like http://HOST:PORT (http or https, a host, "
                 "no query)",
                 value);
        return -1;
    }
    hn_strlcpy(cfg->controller, url, sizeof(cfg->controller));
    return 0;
}

static int set_str(char *dst, size_t size, const char *value, const char *key, char *err,
                   unsigned errsize)
{
    if (hn_strlcpy(dst, value, size) >= size) {
        snprintf(err, errsize, "%s: value longer than %zu bytes", key, size - 1);
        return -1;
    }
    return 0;
}

int hn_agent_config_set(struct hn_agent_config *cfg, const char *key, const char *value, char *err,
                        unsigned errsize)
{
    if (strcmp(key, "listen") == 0)
        return set_str(cfg->listen, sizeof(cfg->listen), value, key, err, errsize);
    if (strcmp(key, "nvml-lib") == 0)
        return set_str(cfg->nvml_lib, sizeof(cfg->nvml_lib), value, key, err, errsize);
    if (strcmp(key, "sysfs-root") == 0)
        return set_str(cfg->sysfs_root, sizeof(cfg->sysfs_root), value, key, err, errsize);
    if (strcmp(key, "proc-root") == 0)
        return set_str(cfg->proc_root, sizeof(cfg->proc_root), value, key, err, errsize);
    if (strcmp(key, "kmsg") == 0)
        return set_str(cfg->kmsg, sizeof(cfg->kmsg), value, key, err, errsize);
    if (strcmp(key, "xid-catalog") == 0)
        return set_str(cfg->xid_catalog, sizeof(cfg->xid_catalog), value, key, err, errsize);
    if (strcmp(key, "hostname") == 0)
        return set_str(cfg->hostname, sizeof(cfg->hostname), value, key, err, errsize);
    if (strcmp(key, "interval") == 0) {
        double v;
        if (hn_parse_double(value, &v) != 0 || v < 0.05 || v > 3600) {
            snprintf(err, errsize, "interval: '%s' is not a number of seconds in [0.05, 3600]",
                     value);
            return -1;
        }
        cfg->interval = v;
        return 0;
    }
    if (strcmp(key, "controller") == 0)
        return set_controller(cfg, value, err, errsize);
    if (strcmp(key, "token-file") == 0)
        return set_str(cfg->token_file, sizeof(cfg->token_file), value, key, err, errsize);
    if (strcmp(key, "push-queue") == 0) {
        uint64_t v;
        if (hn_parse_u64(value, 10, &v) != 0 || v < 1 || v > HN_PUSH_QUEUE_MAX) {
            snprintf(err, errsize, "push-queue: '%s' is not a number of frames in [1, %u]", value,
                     HN_PUSH_QUEUE_MAX);
            return -1;
        }
        cfg->push_queue = (unsigned)v;
        return 0;
    }
    if (strcmp(key, "step-socket") == 0) {
        if (strcmp(value, "off") == 0)
            value = "";
        else if (value[0] != '/') {
            snprintf(err, errsize, "step-socket: '%s' is not an absolute path (or \"off\")", value);
            return -1;
        }
        return set_str(cfg->step_socket, sizeof(cfg->step_socket), value, key, err, errsize);
    }
    if (strcmp(key, "step-subuid-file") == 0) {
        if (strcmp(value, "off") == 0)
            value = "";
        else if (value[0] != '/') {
            snprintf(err, errsize, "step-subuid-file: '%s' is not an absolute path (or \"off\")",
                     value);
            return -1;
        }
        return set_str(cfg->step_subuid_file, sizeof(cfg->step_subuid_file), value, key, err,
                       errsize);
    }
    snprintf(err, errsize, "unknown setting '%s'", key);
    return -1;
}
