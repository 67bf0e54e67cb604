/*
 * fuzz_kmsg.c - libFuzzer target for the kernel-log Xid/SXid parser (src/agent/kmsg.c).
 *
 * The input is one arbitrary line, not NUL-terminated. Besides not crashing, the parser must
 * keep its promises: a reported event has terminated, bounded strings and a known kind.
 */
#include "agent/kmsg.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hn_xid_event ev;
    struct hn_kmsg_record rec;
    if (hn_kmsg_parse_line((const char *)data, size, &ev) == 1) {
        if (ev.kind != HN_XID && ev.kind != HN_SXID)
            abort();
        if (memchr(ev.pci, '\0', sizeof(ev.pci)) == NULL ||
            memchr(ev.msg, '\0', sizeof(ev.msg)) == NULL)
            abort();
        if (ev.ts_kind < HN_TS_NONE || ev.ts_kind > HN_TS_WALL)
            abort();
    }
    if (hn_kmsg_parse_record((const char *)data, size, &rec) == 0) {
        const char *p = (const char *)data;
        if (rec.msg < p || rec.msg + rec.msg_len > p + size)
            abort();
    }
    return 0;
}
