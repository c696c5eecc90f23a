/* The cost model's estimates; see adf_model.h. */
#include "adf_model.h"
#include "adf_codec.h"

#include <string.h>

void adf_model_init(adf_model_t *m)
{
    int c, k;

    memset(m, 0, sizeof(*m));
    for (c = 0; c < ADF_NCODINGS; c++) {
        for (k = 0; k < ADF_NCLASSES; k++) {
            m->scale[c][k] = 1.0;
        }
    }
}

void adf_model_rung(const adf_model_t *m, adf_coding_e c, int level,
                    int whole, double *cost, double *ratio)
{
    double pc = 0, pr = 1;

    adf_codec_prior(c, level, whole, &pc, &pr);
    if (!m) {
        *cost = pc;     /* no shared model (no segment): the priors */
        *ratio = pr;
        return;
    }
    *cost = pc * m->scale[c][whole]
            * (m->rung[c][level][whole].cost_dev > 0
               ? m->rung[c][level][whole].cost_dev : 1);
    *ratio = pr * (m->rung[c][level][whole].ratio_dev > 0
                   ? m->rung[c][level][whole].ratio_dev : 1);
}
