/* The cost model: what each rung (a coding at a level, for a streamed or
 * a whole body) costs in CPU per input byte and what ratio it gives, from
 * the backends' priors (adf_codec_prior) scaled to this machine and by
 * what the controller learned (adf_control.c updates it).  The policy
 * reads it to draw a coding's efficient frontier.  Pure: no httpd. */
#ifndef ADF_MODEL_H
#define ADF_MODEL_H

#include "adf_coding.h"

#define ADF_NLEVELS (ADF_MAX_LEVEL + 1)
#define ADF_NCLASSES 2          /* 0: streamed, 1: whole body */

typedef struct {
    double cost_dev;            /* cost / what the others' predict; 0: 1 */
    double ratio_dev;           /* the same for the ratio */
} adf_rung_t;

typedef struct {
    adf_rung_t rung[ADF_NCODINGS][ADF_NLEVELS][ADF_NCLASSES];
    double scale[ADF_NCODINGS][ADF_NCLASSES];   /* the machine: cost/prior */
    /* the timed bytes each scale was learned from; 0: none yet, and the
     * scale is the machine's as the others showed it */
    double seen[ADF_NCODINGS][ADF_NCLASSES];
} adf_model_t;

/* The priors alone: every scale 1, no deviation learned. */
void adf_model_init(adf_model_t *m);

/* The estimate for a rung: the prior, scaled to this machine and by the
 * rung's learned deviation (m NULL: the prior). */
void adf_model_rung(const adf_model_t *m, adf_coding_e c, int level,
                    int whole, double *cost, double *ratio);

#endif /* ADF_MODEL_H */
