#include "agent/config.h"

#include "common/settings.h"
#include "common/util.h"
#include "common/xid.h"
#include "houston/step.h"

#include <stddef.h>
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
static int set_controller(const struct hn_setting *row, void *obj, const char *key,
                          const char *value, char *err, size_t errsize)
{
    (void)row, (void)key;
    struct hn_agent_config *cfg = obj;
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

static const struct hn_settings agent_settings;

/* An absolute path, or "off" for none (""). */
static int set_path_or_off(const struct hn_setting *row, void *obj, const char *key,
                           const char *value, char *err, size_t errsize)
{
    if (strcmp(value, "off") == 0) {
        value = "";
    } else if (value[0] != '/') {
        snprintf(err, errsize, "%s: '%s' is not an absolute path (or \"off\")", key, value);
        return -1;
    }
    const struct hn_setting path = {row->name, HN_SET_STRING, row->offset, .size = row->size};
    return hn_settings_put(&agent_settings, &path, obj, key, value, err, errsize);
}

#define CFG(field)  offsetof(struct hn_agent_config, field)
#define SIZE(field) sizeof(((struct hn_agent_config *)NULL)->field)
#define STR(key, field)                                                                            \
    {                                                                                              \
        key, HN_SET_STRING, CFG(field), .size = SIZE(field)                                        \
    }

/* Every flag --NAME is the key NAME (agent.c lists the flags). */
static const struct hn_setting agent_rows[] = {
    STR("listen", listen),
    STR("nvml-lib", nvml_lib),
    STR("sysfs-root", sysfs_root),
    STR("proc-root", proc_root),
    STR("kmsg", kmsg),
    STR("xid-catalog", xid_catalog),
    STR("hostname", hostname),
    {"interval", HN_SET_DOUBLE, CFG(interval), .lo = 0.05, .hi = 3600, .what = "number of seconds"},
    {"controller", HN_SET_CUSTOM, .parse = set_controller},
    STR("token-file", token_file),
    {"push-queue", HN_SET_COUNT, CFG(push_queue), .lo = 1, .hi = HN_PUSH_QUEUE_MAX,
     .what = "number of frames"},
    {"step-socket", HN_SET_CUSTOM, CFG(step_socket), .size = SIZE(step_socket),
     .parse = set_path_or_off},
    {"step-subuid-file", HN_SET_CUSTOM, CFG(step_subuid_file), .size = SIZE(step_subuid_file),
     .parse = set_path_or_off},
};

static const struct hn_settings agent_settings = {agent_rows, HN_ARRAY_LEN(agent_rows),
                                                  HN_SETTINGS_VALUE};

int hn_agent_config_set(struct hn_agent_config *cfg, const char *key, const char *value, char *err,
                        unsigned errsize)
{
    return hn_settings_set(&agent_settings, cfg, key, value, err, errsize) == 0 ? 0 : -1;
}
