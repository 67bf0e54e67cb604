#include "common/conf.h"

#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define CONF_MAX_LINE  4096
#define CONF_MAX_BYTES (1 << 20)

static int parse_line(char *line, char **key, char **value)
{
    char *hash = NULL;
    int quoted = 0;
    for (char *p = line; *p; p++) {
        if (*p == '"')
            quoted = !quoted;
        else if (*p == '#' && !quoted) {
            hash = p;
            break;
        }
    }
    if (hash)
        *hash = '\0';
    hn_trim(line);
    if (line[0] == '\0')
        return 1;
    char *eq = strchr(line, '=');
    if (!eq)
        return -1;
    *eq = '\0';
    *key = hn_trim(line);
    *value = hn_trim(eq + 1);
    if ((*key)[0] == '\0')
        return -1;
    size_t vl = strlen(*value);
    if (vl >= 2 && (*value)[0] == '"' && (*value)[vl - 1] == '"') {
        (*value)[vl - 1] = '\0';
        (*value)++;
    }
    return 0;
}

int hn_conf_load(const char *path, hn_conf_set_fn set, void *ctx, char *err, size_t errsize)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errsize, "%s: %s", path, strerror(errno));
        return -1;
    }
    char line[CONF_MAX_LINE + 2];
    int lineno = 0, rc = 0;
    size_t total = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        size_t n = strlen(line);
        total += n;
        if (total > CONF_MAX_BYTES) {
            snprintf(err, errsize, "%s: file larger than %d bytes", path, CONF_MAX_BYTES);
            rc = -1;
            break;
        }
        if (n > CONF_MAX_LINE && line[n - 1] != '\n') {
            snprintf(err, errsize, "%s:%d: line longer than %d bytes", path, lineno, CONF_MAX_LINE);
            rc = -1;
            break;
        }
        char *key, *value;
        int pr = parse_line(line, &key, &value);
        if (pr > 0)
            continue;
        if (pr < 0) {
            snprintf(err, errsize, "%s:%d: expected 'key = value'", path, lineno);
            rc = -1;
            break;
        }
        if (set(key, value, ctx) != 0) {
            snprintf(err, errsize, "%s:%d: bad setting '%s = %s'", path, lineno, key, value);
            rc = -1;
            break;
        }
    }
    fclose(f);
    return rc;
}
