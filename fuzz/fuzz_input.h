/* Shared by the text-parser fuzzers: the input as a NUL-terminated
 * string in a fresh subpool (destroy it when done). */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stdint.h>
#include <string.h>
#include <apr_general.h>
#include <apr_pools.h>

static char *fuzz_string(apr_pool_t **p, const uint8_t *data, size_t size)
{
    static apr_pool_t *root;
    char *s;

    if (!root) {
        apr_initialize();
        apr_pool_create(&root, NULL);
    }
    apr_pool_create(p, root);
    s = apr_palloc(*p, size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif /* FUZZ_INPUT_H */
