/* libFuzzer: Accept-Encoding parsing and selection.  Oracle: the chosen
 * coding is one the client accepts (q > 0) and no listed coding has a
 * higher q; nothing crashes or reads out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "adf_negotiate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const adf_coding_e prefs[2][2] = { { ADF_BR, ADF_GZIP },
                                              { ADF_GZIP, ADF_BR } };
    char *s = malloc(size + 1);
    adf_accept_t acc;
    int i, k;

    memcpy(s, data, size);
    s[size] = '\0';
    adf_accept_parse(s, &acc);
    for (k = 0; k < 2; k++) {
        adf_coding_e c = adf_negotiate(&acc, prefs[k], 2);
        if (c != ADF_IDENTITY) {
            int q = adf_accept_q(&acc, c);
            if (q <= 0 || q > 1000) {
                abort();
            }
            for (i = 0; i < 2; i++) {
                if (adf_accept_q(&acc, prefs[k][i]) > q) {
                    abort();
                }
            }
        }
    }
    for (i = 0; i < ADF_NCODINGS; i++) {
        if (acc.q[i] > 1000 || acc.q[i] < -1) {
            abort();
        }
    }
    free(s);
    return 0;
}
