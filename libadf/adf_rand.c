/* xorshift64* with its state in thread-local storage, seeded once per
 * thread from the system's entropy (or the clock and the state's
 * address when that fails). */
#include "adf_rand.h"

#include <apr_general.h>
#include <apr_time.h>

static __thread apr_uint64_t state;

double adf_rand01(void)
{
    apr_uint64_t x = state;

    if (!x) {
        if (apr_generate_random_bytes((unsigned char *)&x, sizeof(x))
            != APR_SUCCESS || !x) {
            x = (apr_uint64_t)apr_time_now() ^ (apr_uint64_t)(apr_uintptr_t)&state;
        }
        x |= 1;
    }
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    state = x;
    return (double)((x * APR_UINT64_C(2685821657736338717)) >> 11)
           / 9007199254740992.0;
}
