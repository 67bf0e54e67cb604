#include "agent/expo.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void hn_expo_init(struct hn_expo *e, struct hn_buf *out)
{
    e->out = out;
    e->series = 0;
    e->families = 0;
    e->truncated = 0;
}

/* Returns 1 when the write happened; a failed one marks the output truncated. */
static int put(struct hn_expo *e, int rc)
{
    if (rc)
        e->truncated = 1;
    return rc == 0;
}

void hn_expo_family(struct hn_expo *e, const char *name, const char *help, enum hn_metric_type type)
{
    if (e->truncated)
        return;
    if (put(e, hn_buf_printf(e->out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
                             type == HN_COUNTER ? "counter" : "gauge")))
        e->families++;
}

/* Integral values print without a fraction, as dcgm-exporter does for counters; others with
 * 15 significant digits, so that small durations do not round to 0. */
static int format_value(char *buf, size_t size, double v)
{
    if (isinf(v))
        return snprintf(buf, size, v > 0 ? "+Inf" : "-Inf");
    if (v == floor(v) && fabs(v) < 9.007199254740992e15)
        return snprintf(buf, size, "%.0f", v);
    return snprintf(buf, size, "%.15g", v);
}

void hn_expo_sample(struct hn_expo *e, const char *name, const char *labels, double value)
{
    if (e->truncated || isnan(value))
        return;
    char num[64];
    format_value(num, sizeof(num), value);
    int rc = labels && labels[0] ? hn_buf_printf(e->out, "%s{%s} %s\n", name, labels, num)
                                 : hn_buf_printf(e->out, "%s %s\n", name, num);
    if (put(e, rc))
        e->series++;
}

int hn_expo_label(char *buf, size_t size, size_t *len, const char *name, const char *value)
{
    size_t n = *len;
    size_t need = strlen(name) + 3 + (n ? 1 : 0); /* name="value" and a comma */
    for (const char *p = value; *p; p++)
        need += (*p == '\\' || *p == '"' || *p == '\n') ? 2 : 1;
    if (n + need + 1 > size)
        return -ENOSPC;
    if (n)
        buf[n++] = ',';
    size_t nl = strlen(name);
    memcpy(buf + n, name, nl);
    n += nl;
    buf[n++] = '=';
    buf[n++] = '"';
    for (const char *p = value; *p; p++) {
        if (*p == '\\' || *p == '"') {
            buf[n++] = '\\';
            buf[n++] = *p;
        } else if (*p == '\n') {
            buf[n++] = '\\';
            buf[n++] = 'n';
        } else {
            buf[n++] = *p;
        }
    }
    buf[n++] = '"';
    buf[n] = '\0';
    *len = n;
    return 0;
}

void hn_expo_one(struct hn_expo *e, const char *name, const char *help, enum hn_metric_type type,
                 double value)
{
    hn_expo_family(e, name, help, type);
    hn_expo_sample(e, name, NULL, value);
}
