/*
 * fuzz_csv.c - libFuzzer target for the RFC 4180 CSV reader (src/common/xid.c).
 *
 * Reads records until the end or an error, checking that every field is terminated and that
 * the sizes stay within the reader's caps.
 */
#include "common/xid.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hn_csv_reader r;
    char err[128];
    int rc;
    hn_csv_reader_init(&r, (const char *)data, size);
    /* Small caps in some runs so the fuzzer reaches the cap errors too. */
    if (size > 0 && data[0] == '#') {
        r.max_field = 8;
        r.max_record = 32;
    }
    while ((rc = hn_csv_reader_next(&r, err, sizeof(err))) == 1) {
        size_t total = 0;
        if (r.nfields == 0 || r.nfields > HN_CSV_MAX_FIELDS)
            abort();
        for (size_t i = 0; i < r.nfields; i++) {
            if (r.field[i][r.field_len[i]] != '\0' || r.field_len[i] > r.max_field)
                abort();
            total += r.field_len[i];
        }
        if (total > r.max_record)
            abort();
    }
    if (rc < 0 && memchr(err, '\0', sizeof(err)) == NULL)
        abort();
    hn_csv_reader_fini(&r);
    return 0;
}
