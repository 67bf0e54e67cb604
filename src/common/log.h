/*
 * log.h - leveled logging to stderr, and rate-limited complaints.
 *
 * hn_log() writes one line "LEVEL houston[pid]: message" to stderr. The threshold is set once
 * at start-up with hn_log_set_level(). Thread-safe (one write(2) per line).
 *
 * A struct hn_complain (collectd's c_complain) lets a caller that fails every cycle say so once,
 * then again only after a growing interval, and say "recovered" when the failure ends. The
 * caller owns the struct (usually static or inside its collector state); it is not locked, so
 * each one belongs to one thread.
 */
#ifndef HN_LOG_H
#define HN_LOG_H

#include <stdint.h>

enum hn_log_level { HN_LOG_ERR, HN_LOG_WARN, HN_LOG_INFO, HN_LOG_DEBUG };

void hn_log_set_level(enum hn_log_level level);
int hn_log_parse_level(const char *s, enum hn_log_level *out);
void hn_log(enum hn_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define hn_err(...)   hn_log(HN_LOG_ERR, __VA_ARGS__)
#define hn_warn(...)  hn_log(HN_LOG_WARN, __VA_ARGS__)
#define hn_info(...)  hn_log(HN_LOG_INFO, __VA_ARGS__)
#define hn_debug(...) hn_log(HN_LOG_DEBUG, __VA_ARGS__)

struct hn_complain {
    uint64_t next_ns;     /* monotonic time before which repeats are silent */
    uint64_t interval_ns; /* doubles on each repeat, up to one hour */
    uint64_t suppressed;  /* repeats not logged since the last line */
    int active;           /* 1 while the failure lasts */
};

/* Logs a warning now or counts it as suppressed. */
void hn_complain(struct hn_complain *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Logs an info line if a complaint was active, and resets it. */
void hn_complain_clear(struct hn_complain *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
