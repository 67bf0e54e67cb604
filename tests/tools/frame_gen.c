/*
 * frame_gen.c - writes one agent frame to stdout, for tests that talk to `houston control`
 * with curl: frame_gen NODE BOOT_ID SEQ [XID_CODE [GPU]]. With HN_GEN_STEP_UID set, the frame
 * also carries one step report of job "gen" (rank 0, step SEQ) sent by that uid, or by an
 * unknown one (as from an older agent) when it is "none".
 */
#include "common/buf.h"
#include "common/fields.h"
#include "common/frame.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    uint64_t boot, seq, code = 0, gpu = 0;
    if (argc < 4 || hn_parse_u64(argv[2], 10, &boot) || hn_parse_u64(argv[3], 10, &seq) ||
        (argc > 4 && hn_parse_u64(argv[4], 10, &code)) ||
        (argc > 5 && hn_parse_u64(argv[5], 10, &gpu))) {
        fprintf(stderr, "usage: frame_gen NODE BOOT_ID SEQ [XID_CODE [GPU]]\n");
        return 2;
    }
    struct hn_buf out;
    hn_buf_init(&out, 1u << 20);
    struct hn_frame_writer w;
    hn_frame_begin(&w, &out, boot, seq, (uint64_t)(hn_wall_s() * 1e9));
    hn_frame_node(&w, argv[1], 8, "NVIDIA H100 80GB HBM3");
    for (unsigned g = 0; g < 8; g++) {
        hn_frame_sample(&w, g, HN_F_GPU_UTIL, 95);
        hn_frame_sample(&w, g, HN_F_SM_CLOCK, 1980);
        hn_frame_sample(&w, g, HN_F_GPU_UP, 1);
    }
    if (code) {
        struct hn_frame_xid x = {(unsigned)gpu, (unsigned)code, 0, {"", 0}, 1};
        hn_frame_xid(&w, &x);
    }
    const char *uid = getenv("HN_GEN_STEP_UID");
    if (uid) {
        uint64_t u = HN_FRAME_NO_U32;
        if (strcmp(uid, "none") != 0 && (hn_parse_u64(uid, 10, &u) || u >= HN_FRAME_NO_U32)) {
            fprintf(stderr, "frame_gen: HN_GEN_STEP_UID is a uid or none\n");
            return 2;
        }
        struct hn_frame_step st = {
            .job = {"gen", 3},
            .rank = 0,
            .local_rank = 0,
            .world = 1,
            .gpu = 0,
            .step = seq,
            .time_ns = (uint64_t)(hn_wall_s() * 1e9),
            .seconds = 1,
            .tokens = NAN,
            .forward_s = NAN,
            .backward_s = NAN,
            .optimizer_s = NAN,
            .comm_s = NAN,
            .checkpoint = HN_FRAME_NO_U64,
            .tflops = NAN,
            .flops_per_token = NAN,
            .uid = (uint32_t)u,
        };
        hn_frame_step(&w, &st);
    }
    int rc = hn_frame_end(&w);
    if (rc == 0)
        fwrite(out.data, 1, out.len, stdout);
    hn_buf_fini(&out);
    return rc == 0 ? 0 : 1;
}
