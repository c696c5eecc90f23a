/* Coder state kept for reuse, and the memory of large coder blocks.
 *
 * Measured (docs/reliability.md, "Memory"): a zstd stream of unknown
 * length asked malloc for one 4.7 MB block per response, a brotli stream
 * for 8.5 MB and 0.5 MB.  The first such free raises glibc's dynamic mmap
 * threshold to the block's size, so every later block came from the heap
 * of the calling thread's arena, and each of a child's 16 arenas (8 per
 * core) kept its block's pages after the free.  So here:
 *
 * - streams take an idle state of their backend and give it back at the
 *   end (idle lists: at most ADF_IDLE_MAX states and ADF_IDLE_BYTES per
 *   backend and process, the least recently used dropped first): memory
 *   follows the number of streams open at once, not the number of
 *   threads or arenas that once ran one;
 * - blocks of ADF_MEM_MAP_MIN bytes or more (the backends that take an
 *   allocator: zstd, brotli) are mapped here, outside malloc's arenas, and
 *   a few idle ones are kept for the next stream (ADF_MEM_IDLE_*, reused
 *   for a request of their size or up to a quarter less); the rest go
 *   back to the kernel at once.
 *
 * What stays idle for long is given back (adf_codec_pool_trim, from the
 * module's watchdog tick in every child).  One mutex guards all of it;
 * pthread_atfork keeps it usable in a child forked while another thread
 * held it (prefork, CGI daemons, the tool).  What a child inherits stays
 * valid (copy-on-write) and is reused there. */
#include "config.h"
#include "adf_codec_impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void before_fork(void)
{
    pthread_mutex_lock(&lock);
}

static void after_fork(void)
{
    pthread_mutex_unlock(&lock);
}

static void after_fork_child(void)
{
    /* the only thread now: whoever held it in the parent is not here */
    pthread_mutex_init(&lock, NULL);
}

static void init_once(void)
{
    pthread_atfork(before_fork, after_fork, after_fork_child);
}

void adf_codec_pool_init(void)
{
    pthread_once(&once, init_once);
}

static void lock_pool(void)
{
    pthread_once(&once, init_once);
    pthread_mutex_lock(&lock);
}

/* ---- idle coder states ---------------------------------------------- */

static adf_idle_list_t *lists;      /* every list that ever held a state */
static adf_codec_pool_stats_t totals;

static void link_list(adf_idle_list_t *l)
{
    if (!l->linked) {
        l->linked = 1;
        l->next_list = lists;
        lists = l;
    }
}

adf_idle_t *adf_idle_take(adf_idle_list_t *l, apr_uint32_t key, int any)
{
    adf_idle_t **pp, *e = NULL;

    lock_pool();
    for (pp = &l->head; *pp; pp = &(*pp)->next) {
        if ((*pp)->key == key) {
            break;
        }
    }
    if (!*pp && any && l->head) {
        pp = &l->head;      /* the most recently used */
    }
    if (*pp) {
        e = *pp;
        *pp = e->next;
        l->n--;
        l->bytes -= e->bytes;
        totals.reused++;
    }
    else {
        totals.made++;
    }
    pthread_mutex_unlock(&lock);
    return e;
}

void adf_idle_put(adf_idle_list_t *l, adf_idle_t *e, apr_uint32_t key,
                  apr_size_t bytes)
{
    adf_idle_t *drop = NULL, **pp;

    e->key = key;
    e->bytes = bytes;
    e->since = apr_time_now();
    lock_pool();
    if (bytes > ADF_IDLE_BYTES) {
        /* it would evict every other one */
        totals.dropped++;
        pthread_mutex_unlock(&lock);
        l->destroy(e);
        return;
    }
    link_list(l);
    e->next = l->head;
    l->head = e;
    l->n++;
    l->bytes += bytes;
    /* Over a cap: drop from the least recently used end. */
    while (l->n > ADF_IDLE_MAX || l->bytes > ADF_IDLE_BYTES) {
        for (pp = &l->head; (*pp)->next; pp = &(*pp)->next) {
        }
        (*pp)->next = drop;
        drop = *pp;
        *pp = NULL;
        l->n--;
        l->bytes -= drop->bytes;
        totals.dropped++;
    }
    pthread_mutex_unlock(&lock);
    while (drop) {
        adf_idle_t *next = drop->next;
        l->destroy(drop);
        drop = next;
    }
}

/* ---- large blocks, mapped ------------------------------------------- */

/* A block's header: the mapping's length, or 0 for a malloc'ed block.
 * 64 bytes keep the caller's pointer on a cache line. */
#define HDR 64

typedef struct idle_block {
    struct idle_block *next;
    apr_size_t len;
    apr_time_t since;       /* idle since */
} idle_block_t;

static idle_block_t *blocks;    /* idle mappings, most recent first */
/* This thread is trimming: what the states it frees free is unmapped. */
static __thread int trimming;
static int nblocks;
static apr_size_t idle_bytes, mapped_bytes;

static apr_size_t page_size(void)
{
    static apr_size_t ps;

    if (!ps) {
        long v = sysconf(_SC_PAGESIZE);
        ps = v > 0 ? (apr_size_t)v : 4096;
    }
    return ps;
}

void *adf_mem_alloc(void *opaque, size_t n)
{
    apr_size_t len, ps = page_size();
    idle_block_t **pp, *b = NULL;
    unsigned char *p;

    if (n < ADF_MEM_MAP_MIN) {
        if (!(p = malloc(n + HDR))) {
            return NULL;
        }
        *(apr_size_t *)p = 0;
        return p + HDR;
    }
    if (n > (apr_size_t)-1 - HDR - ps) {
        return NULL;
    }
    len = (n + HDR + ps - 1) / ps * ps;
    lock_pool();
    /* The smallest idle block that holds n, if it is at most a quarter
     * larger: buffers that grow with the output vary a little in size
     * from stream to stream. */
    for (pp = &blocks; *pp; pp = &(*pp)->next) {
        apr_size_t l = (*pp)->len;

        if (l >= len && l <= len + len / 4 && (!b || l < b->len)) {
            b = *pp;
            if (l == len) {
                break;
            }
        }
    }
    if (b) {
        for (pp = &blocks; *pp != b; pp = &(*pp)->next) {
        }
        *pp = b->next;
        nblocks--;
        idle_bytes -= b->len;
        len = b->len;
        totals.blocks_reused++;
    }
    pthread_mutex_unlock(&lock);
    if (!b) {
        p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            return NULL;
        }
        lock_pool();
        mapped_bytes += len;
        totals.blocks_mapped++;
        pthread_mutex_unlock(&lock);
        b = (idle_block_t *)p;
    }
    *(apr_size_t *)b = len;
    return (unsigned char *)b + HDR;
}

void adf_mem_free(void *opaque, void *ptr)
{
    unsigned char *p = ptr;
    apr_size_t len;
    idle_block_t *b, *drop = NULL, **pp;

    if (!p) {
        return;
    }
    p -= HDR;
    len = *(apr_size_t *)p;
    if (!len) {
        free(p);
        return;
    }
    b = (idle_block_t *)p;
    b->len = len;
    b->since = apr_time_now();
    lock_pool();
    if (len <= ADF_MEM_IDLE_BYTES && !trimming) {
        b->next = blocks;
        blocks = b;
        nblocks++;
        idle_bytes += len;
        b = NULL;
        while (nblocks > ADF_MEM_IDLE_MAX || idle_bytes > ADF_MEM_IDLE_BYTES) {
            for (pp = &blocks; (*pp)->next; pp = &(*pp)->next) {
            }
            (*pp)->next = drop;
            drop = *pp;
            *pp = NULL;
            nblocks--;
            idle_bytes -= drop->len;
        }
    }
    else {
        b->next = drop;
        drop = b;
    }
    for (b = drop; b; b = b->next) {
        mapped_bytes -= b->len;
        totals.blocks_unmapped++;
    }
    pthread_mutex_unlock(&lock);
    while (drop) {
        b = drop->next;
        munmap(drop, drop->len);
        drop = b;
    }
}

/* ---- for tests, status, the idle trim and exit ------------------------- */

void adf_codec_pool_stats(adf_codec_pool_stats_t *st)
{
    adf_idle_list_t *l;

    lock_pool();
    *st = totals;
    st->idle_states = 0;
    st->idle_state_bytes = 0;
    for (l = lists; l; l = l->next_list) {
        st->idle_states += l->n;
        st->idle_state_bytes += l->bytes;
    }
    st->idle_blocks = nblocks;
    st->idle_block_bytes = idle_bytes;
    st->mapped_bytes = mapped_bytes;
    pthread_mutex_unlock(&lock);
}

static void (*at_exit[ADF_POOL_AT_EXIT])(void);
static int nat_exit;

void adf_codec_pool_at_exit(void (*fn)(void))
{
    lock_pool();
    if (nat_exit < ADF_POOL_AT_EXIT) {
        at_exit[nat_exit++] = fn;
    }
    pthread_mutex_unlock(&lock);
}

int adf_codec_pool_exit(adf_codec_pool_stats_t *st)
{
    int i, n;

    if (pthread_mutex_trylock(&lock)) {
        return 0;
    }
    n = nat_exit;
    pthread_mutex_unlock(&lock);
    adf_codec_pool_stats(st);
    /* outside the lock: what they free may come back to it */
    for (i = 0; i < n; i++) {
        at_exit[i]();
    }
    adf_codec_pool_drain();
    return 1;
}

void adf_codec_pool_trim(apr_interval_time_t idle)
{
    apr_time_t before = apr_time_now() - idle;
    adf_idle_list_t *l, *first;
    idle_block_t *drop = NULL, **bp, *b;

    lock_pool();
    first = lists;      /* lists are only ever prepended */
    pthread_mutex_unlock(&lock);
    for (l = first; l; l = l->next_list) {
        adf_idle_t *gone = NULL, **pp, *e;

        lock_pool();
        for (pp = &l->head; *pp;) {
            e = *pp;
            if (idle && e->since >= before) {
                pp = &e->next;
                continue;
            }
            *pp = e->next;
            l->n--;
            l->bytes -= e->bytes;
            totals.dropped++;
            e->next = gone;
            gone = e;
        }
        pthread_mutex_unlock(&lock);
        trimming = 1;
        while (gone) {      /* may free blocks: outside the lock */
            e = gone->next;
            l->destroy(gone);
            gone = e;
        }
        trimming = 0;
    }
    lock_pool();
    for (bp = &blocks; *bp;) {
        b = *bp;
        if (idle && b->since >= before) {
            bp = &b->next;
            continue;
        }
        *bp = b->next;
        nblocks--;
        idle_bytes -= b->len;
        mapped_bytes -= b->len;
        totals.blocks_unmapped++;
        b->next = drop;
        drop = b;
    }
    pthread_mutex_unlock(&lock);
    while (drop) {
        b = drop->next;
        munmap(drop, drop->len);
        drop = b;
    }
}
