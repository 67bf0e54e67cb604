/*
 * conf.h - the "key = value" configuration file format shared by every verb.
 *
 * One setting per line; '#' starts a comment; blank lines are ignored; keys are the long flag
 * names without dashes (listen, nvml-lib, ...), so a config file and a command line say the
 * same thing the same way. Values may be quoted with "..." to keep leading blanks.
 *
 * hn_conf_load() calls set(key, value, ctx) for each setting in file order. A set() that
 * returns non-zero stops the load; the error message names the file and line. Lines longer
 * than 4 KiB and files over 1 MiB are refused.
 */
#ifndef HN_CONF_H
#define HN_CONF_H

#include <stddef.h>

typedef int (*hn_conf_set_fn)(const char *key, const char *value, void *ctx);

/* Returns 0, or -1 with a one-line reason in err. */
int hn_conf_load(const char *path, hn_conf_set_fn set, void *ctx, char *err, size_t errsize);

#endif
