/* One response's decision on the frontier, counted by bench/instructions
 * under callgrind: a client accepting gzip and br, the policy's defaults
 * (levels, preference, size caps).
 *
 *     bench/decide N GEN BUDGET LENGTH
 *
 * runs N decisions with the model's generation GEN (0: unknown, each
 * frontier built afresh; else memoized) at BUDGET ns per byte for a body
 * of LENGTH bytes, whole (-1: unknown, streamed, where a size cap
 * narrows the levels) and prints a checksum of the decisions, the same
 * for either GEN. */
#include "config.h"
#include "adf_policy.h"

#include <apr_general.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    adf_policy_conf_t conf;
    adf_policy_in_t in;
    adf_accept_t acc;
    adf_model_t model;
    adf_decision_t d;
    long i, n, sum = 0;

    if (argc != 5) {
        fprintf(stderr, "usage: %s N GEN BUDGET LENGTH\n", argv[0]);
        return 2;
    }
    n = atol(argv[1]);
    apr_initialize();
    adf_policy_defaults(&conf);
    conf.min_length = 100;
    adf_model_init(&model);
    adf_accept_parse("gzip, deflate, br", &acc);
    memset(&in, 0, sizeof(in));
    in.status_ok = in.type_ok = 1;
    in.length = atol(argv[4]);
    in.whole = in.length >= 0;
    in.accept = &acc;
    in.model = &model;
    in.model_gen = (apr_uint64_t)atol(argv[2]);
    in.budget = atof(argv[3]);
    for (i = 0; i < n; i++) {
        in.dice = (double)(i % 97) / 97;
        adf_policy_decide(&conf, &in, &d);
        sum += d.coding * 10000 + d.level * 100 + d.reason;
    }
    printf("%ld\n", sum);
    return 0;
}
