/*
 * config.h - the agent's settings, from flags and/or a `key = value` file (common/conf.h).
 * Every flag --NAME has the config key NAME. Defaults are in hn_agent_config_defaults().
 * The struct is filled once at start-up and read-only afterwards (any thread may read it).
 */
#ifndef HN_AGENT_CONFIG_H
#define HN_AGENT_CONFIG_H

#include <limits.h>

struct hn_agent_config {
    char listen[128];           /* listen: ADDR:PORT for /metrics, default 127.0.0.1:9400 */
    char nvml_lib[PATH_MAX];    /* nvml-lib: library to dlopen, default libnvidia-ml.so.1 */
    char sysfs_root[PATH_MAX];  /* sysfs-root: where "sys" lives, default /sys */
    char proc_root[PATH_MAX];   /* proc-root: where "proc" lives, default /proc */
    char kmsg[PATH_MAX];        /* kmsg: kernel log to follow, default /dev/kmsg */
    char xid_catalog[PATH_MAX]; /* xid-catalog: CSV of Xid codes, default the shipped one */
    char hostname[256];         /* hostname: the Hostname label, default gethostname() */
    double interval;            /* interval: seconds between collections, default 10 */
    char controller[1024];      /* controller: base URL, e.g. http://10.0.0.5:8080; "" = off */
    char token_file[PATH_MAX];  /* token-file: file holding the cluster token */
    unsigned push_queue;        /* push-queue: frames kept while the controller is away (360) */
    char step_socket[108];      /* step-socket: Unix socket for step reports; "" = off */
    /* step-subuid-file: subordinate uid ranges (subuid(5)) whose reports count as their
     * user's; default /etc/subuid, "" = off */
    char step_subuid_file[PATH_MAX];
};

#define HN_PUSH_QUEUE_MAX 100000u /* largest push-queue accepted */

void hn_agent_config_defaults(struct hn_agent_config *cfg);
/* Sets one key from a flag or a config line; returns 0 or -1 with a reason in err. */
int hn_agent_config_set(struct hn_agent_config *cfg, const char *key, const char *value, char *err,
                        unsigned errsize);

#endif
