/* A per-thread pseudo-random generator for choices that need no secrecy
 * (mixing two rungs): httpd's ap_random_pick takes a global mutex on every
 * call under threaded MPMs.  Pure: no httpd. */
#ifndef ADF_RAND_H
#define ADF_RAND_H

/* Uniform in [0, 1). */
double adf_rand01(void);

#endif /* ADF_RAND_H */
