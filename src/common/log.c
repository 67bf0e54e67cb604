#include "common/log.h"

#include "common/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static enum hn_log_level threshold = HN_LOG_INFO;
static const char *const level_names[] = {"error", "warn", "info", "debug"};

void hn_log_set_level(enum hn_log_level level)
{
    threshold = level;
}

int hn_log_parse_level(const char *s, enum hn_log_level *out)
{
    for (size_t i = 0; i < HN_ARRAY_LEN(level_names); i++) {
        if (strcasecmp(s, level_names[i]) == 0) {
            *out = (enum hn_log_level)i;
            return 0;
        }
    }
    return -1;
}

static void vlog(enum hn_log_level level, const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof(line), "%s houston[%d]: ", level_names[level], (int)getpid());
    if (n < 0)
        return;
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    if (m < 0)
        return;
    size_t len = strlen(line);
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

void hn_log(enum hn_log_level level, const char *fmt, ...)
{
    if (level > threshold)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog(level, fmt, ap);
    va_end(ap);
}

void hn_complain(struct hn_complain *c, const char *fmt, ...)
{
    uint64_t now = hn_mono_ns();
    c->active = 1;
    if (now < c->next_ns) {
        c->suppressed++;
        return;
    }
    if (c->interval_ns == 0)
        c->interval_ns = 60ull * 1000000000ull;
    else if (c->interval_ns < 3600ull * 1000000000ull)
        c->interval_ns *= 2;
    c->next_ns = now + c->interval_ns;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (c->suppressed)
        hn_warn("%s (%llu similar messages suppressed)", msg, (unsigned long long)c->suppressed);
    else
        hn_warn("%s", msg);
    c->suppressed = 0;
}

void hn_complain_clear(struct hn_complain *c, const char *fmt, ...)
{
    if (!c->active)
        return;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    hn_info("%s", msg);
    memset(c, 0, sizeof(*c));
}
