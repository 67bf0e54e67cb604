#include "common/stepmsg.h"

#include "common/util.h"
#include "houston/step.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define INT_MAX_V HN_STEP_COUNT_MAX /* ranks, world sizes and GPU indexes above are nonsense */

enum key_kind { K_JOB, K_INT, K_STEP, K_REAL, K_CKPT, K_PAUSE };

/* The keys the agent reads; `off` is the member's offset in struct hn_step_msg. */
static const struct {
    const char *name;
    enum key_kind kind;
    size_t off;
    int required;    /* 2: dur or pause, one of them */
    int report_only; /* a step report's value: refused in a pause notice */
} keys[] = {
    {"job", K_JOB, offsetof(struct hn_step_msg, job), 1, 0},
    {"step", K_STEP, offsetof(struct hn_step_msg, step), 1, 0},
    {"dur", K_REAL, offsetof(struct hn_step_msg, seconds), 2, 1},
    {"pause", K_PAUSE, offsetof(struct hn_step_msg, pause), 2, 0},
    {"rank", K_INT, offsetof(struct hn_step_msg, rank), 0, 0},
    {"lrank", K_INT, offsetof(struct hn_step_msg, local_rank), 0, 0},
    {"world", K_INT, offsetof(struct hn_step_msg, world), 0, 0},
    {"gpu", K_INT, offsetof(struct hn_step_msg, gpu), 0, 0},
    {"tokens", K_REAL, offsetof(struct hn_step_msg, tokens), 0, 1},
    {"fwd", K_REAL, offsetof(struct hn_step_msg, forward_s), 0, 1},
    {"bwd", K_REAL, offsetof(struct hn_step_msg, backward_s), 0, 1},
    {"opt", K_REAL, offsetof(struct hn_step_msg, optimizer_s), 0, 1},
    {"comm", K_REAL, offsetof(struct hn_step_msg, comm_s), 0, 1},
    {"ckpt", K_CKPT, offsetof(struct hn_step_msg, checkpoint), 0, 1},
    {"tflops", K_REAL, offsetof(struct hn_step_msg, tflops), 0, 1},
    {"fpt", K_REAL, offsetof(struct hn_step_msg, flops_per_token), 0, 1},
};
#define NKEYS HN_ARRAY_LEN(keys)

const char *hn_pause_name(int kind)
{
    static const char *const names[] = {NULL, "checkpoint", "eval", "other"};
    return kind >= 0 && kind < (int)HN_ARRAY_LEN(names) ? names[kind] : NULL;
}

/* A pause word: 1 to 16 of [a-z0-9_-]. */
static int pause_kind(const char *v)
{
    size_t n = strlen(v);
    if (n == 0 || n > 16 || strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789_-") != n)
        return -1;
    if (strcmp(v, "checkpoint") == 0)
        return HN_PAUSE_CHECKPOINT;
    if (strcmp(v, "eval") == 0)
        return HN_PAUSE_EVAL;
    return HN_PAUSE_OTHER; /* a reason a newer client knows */
}

void hn_stepmsg_clear(struct hn_step_msg *m)
{
    memset(m, 0, sizeof(*m));
    m->rank = m->local_rank = m->world = m->gpu = -1;
    m->checkpoint = -1;
    m->seconds = m->tokens = NAN;
    m->forward_s = m->backward_s = m->optimizer_s = m->comm_s = m->tflops = NAN;
    m->flops_per_token = NAN;
}

/* A job id: printable ASCII without spaces or '='. */
static int valid_job(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++) {
        if (*s <= ' ' || *s > '~' || *s == '=')
            return 0;
    }
    return 1;
}

/* Plain decimal digits (integers), or what "%.9g" writes for a value >= 0 (reals): a digit
 * or '.' first, then digits, '.', 'e' and signs. No '+' in front, no hex, no "inf". */
static int plain_number(const char *v, int real)
{
    if (!((*v >= '0' && *v <= '9') || (real && *v == '.')))
        return 0;
    for (; *v; v++) {
        if (!(*v >= '0' && *v <= '9') &&
            !(real && (*v == '.' || *v == 'e' || *v == 'E' || *v == '+' || *v == '-')))
            return 0;
    }
    return 1;
}

static int set_value(struct hn_step_msg *m, size_t k, char *v)
{
    char *base = (char *)m + keys[k].off;
    switch (keys[k].kind) {
    case K_JOB:
        if (!valid_job(v) || strlen(v) >= HN_JOB_ID_SIZE)
            return -1;
        hn_strlcpy(base, v, HN_JOB_ID_SIZE);
        return 0;
    case K_STEP: {
        uint64_t u;
        if (!plain_number(v, 0) || hn_parse_u64(v, 10, &u) != 0)
            return -1;
        memcpy(base, &u, sizeof(u));
        return 0;
    }
    case K_INT:
    case K_CKPT: {
        int64_t i;
        if (!plain_number(v, 0) || hn_parse_i64(v, 10, &i) != 0 ||
            (keys[k].kind == K_INT && i > INT_MAX_V))
            return -1;
        memcpy(base, &i, sizeof(i));
        return 0;
    }
    case K_REAL: {
        double d;
        /* Durations, token counts and TFLOP/s are finite and not negative. */
        if (!plain_number(v, 1) || hn_parse_double(v, &d) != 0 || !isfinite(d) || d < 0)
            return -1;
        memcpy(base, &d, sizeof(d));
        return 0;
    }
    case K_PAUSE: {
        int p = pause_kind(v);
        if (p < 0)
            return -1;
        memcpy(base, &p, sizeof(p));
        return 0;
    }
    }
    return -1;
}

int hn_stepmsg_parse(const char *data, size_t len, struct hn_step_msg *out, char *err,
                     size_t errsize)
{
    char line[HN_STEP_DGRAM_MAX + 1];
    hn_stepmsg_clear(out);
    if (len > 0 && data[len - 1] == '\n')
        len--;
    if (len > HN_STEP_DGRAM_MAX) {
        hn_set_err(err, errsize, "datagram of %zu bytes (at most %d)", len, HN_STEP_DGRAM_MAX);
        return -EBADMSG;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)data[i];
        if (c < ' ' || c > '~') {
            hn_set_err(err, errsize, "byte 0x%02x at offset %zu (text only)", c, i);
            return -EBADMSG;
        }
    }
    memcpy(line, data, len);
    line[len] = '\0';

    char *save = NULL;
    char *tok = strtok_r(line, " ", &save);
    if (!tok || strcmp(tok, "hs1") != 0) {
        hn_set_err(err, errsize, "does not start with \"hs1\"");
        return -EBADMSG;
    }
    unsigned seen = 0;
    _Static_assert(NKEYS <= 32, "seen is a bit set");
    while ((tok = strtok_r(NULL, " ", &save)) != NULL) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok) {
            hn_set_err(err, errsize, "\"%.40s\" is not key=value", tok);
            return -EBADMSG;
        }
        *eq = '\0';
        size_t k = 0;
        while (k < NKEYS && strcmp(keys[k].name, tok) != 0)
            k++;
        if (k == NKEYS)
            continue; /* a key from a newer client */
        if (seen & (1u << k)) {
            hn_set_err(err, errsize, "key %s given twice", tok);
            return -EBADMSG;
        }
        seen |= 1u << k;
        if (set_value(out, k, eq + 1) != 0) {
            hn_set_err(err, errsize, "bad value for %s: \"%.40s\"", tok, eq + 1);
            return -EBADMSG;
        }
    }
    for (size_t k = 0; k < NKEYS; k++) {
        if (keys[k].required == 1 && !(seen & (1u << k))) {
            hn_set_err(err, errsize, "no %s", keys[k].name);
            return -EBADMSG;
        }
    }
    unsigned either = 0;
    for (size_t k = 0; k < NKEYS; k++)
        either += keys[k].required == 2 && (seen & (1u << k));
    if (either != 1) {
        hn_set_err(err, errsize, either ? "dur and pause together" : "no dur (nor pause)");
        return -EBADMSG;
    }
    /* A notice carries the identity, step, pause and gpu; a step's values in it are a client's
     * mistake, not something to drop without a word. */
    for (size_t k = 0; out->pause && k < NKEYS; k++) {
        if (keys[k].report_only && (seen & (1u << k))) {
            hn_set_err(err, errsize, "%s in a pause notice", keys[k].name);
            return -EBADMSG;
        }
    }
    return 0;
}
