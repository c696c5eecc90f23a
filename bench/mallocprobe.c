/* LD_PRELOAD diagnostics for bench/soak --malloc-info: what glibc's
 * allocator holds in each child, and who asks it for large blocks.
 *
 *   cc -shared -fPIC -O2 -o mallocprobe.so bench/mallocprobe.c -ldl -lpthread
 *   MALLOCPROBE_DIR=/some/dir LD_PRELOAD=./mallocprobe.so apache2 ...
 *
 * Every malloc, calloc and realloc of 64 KiB or more is counted by size
 * and by the library that called it, and whether glibc served it with
 * its own mmap (the chunk's IS_MMAPPED bit) or from an arena's heap.
 * Each process (children included: a thread is started after every
 * fork) polls MALLOCPROBE_DIR/dump; when that file's mtime changes it
 * writes mi.PID.xml (malloc_info: every arena's heap, what of it is free,
 * the mmapped chunks) and big.PID.txt (the counts).  gdb cannot call into
 * a process on the project's VM (it fails to write the FPU state), hence
 * this shim. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

#define BIG (64 * 1024)
#define NSLOT 256

static struct {
    _Atomic size_t size;
    _Atomic uintptr_t caller;   /* a return address in the caller */
    _Atomic long n, mmapped;
} slots[NSLOT];

static void note(void *p, size_t size, void *caller)
{
    int mm, i;

    if (!p || size < BIG) {
        return;
    }
    mm = (((size_t *)p)[-1] & 2) != 0;
    for (i = 0; i < NSLOT; i++) {
        size_t s = atomic_load(&slots[i].size);
        if (s == 0) {
            size_t zero = 0;
            if (atomic_compare_exchange_strong(&slots[i].size, &zero, size)) {
                atomic_store(&slots[i].caller, (uintptr_t)caller);
                s = size;
            } else {
                s = zero;
            }
        }
        if (s == size) {
            atomic_fetch_add(&slots[i].n, 1);
            atomic_fetch_add(&slots[i].mmapped, mm);
            return;
        }
    }
}

void *malloc(size_t n)
{
    void *p = __libc_malloc(n);
    note(p, n, __builtin_return_address(0));
    return p;
}

void *calloc(size_t a, size_t b)
{
    void *p = __libc_calloc(a, b);
    note(p, a * b, __builtin_return_address(0));
    return p;
}

void *realloc(void *q, size_t n)
{
    void *p = __libc_realloc(q, n);
    note(p, n, __builtin_return_address(0));
    return p;
}

static void dump(const char *dir)
{
    char path[4096];
    FILE *f;
    int i;

    snprintf(path, sizeof(path), "%s/mi.%d.xml", dir, (int)getpid());
    if ((f = fopen(path, "w"))) {
        malloc_info(0, f);
        fclose(f);
    }
    snprintf(path, sizeof(path), "%s/big.%d.txt", dir, (int)getpid());
    if ((f = fopen(path, "w"))) {
        for (i = 0; i < NSLOT && atomic_load(&slots[i].size); i++) {
            Dl_info di;
            const char *lib = "?", *sym = "?";
            void *c = (void *)atomic_load(&slots[i].caller);
            if (c && dladdr(c, &di)) {
                lib = di.dli_fname ? di.dli_fname : "?";
                sym = di.dli_sname ? di.dli_sname : "?";
            }
            fprintf(f, "%zu %ld %ld %s %s\n", atomic_load(&slots[i].size),
                    atomic_load(&slots[i].n), atomic_load(&slots[i].mmapped),
                    lib, sym);
        }
        fclose(f);
    }
}

static void *watch(void *arg)
{
    const char *dir = arg;
    char trig[4096];
    struct stat st;
    time_t seen = 0;
    long seen_ns = 0;

    snprintf(trig, sizeof(trig), "%s/dump", dir);
    if (stat(trig, &st) == 0) {
        seen = st.st_mtim.tv_sec;
        seen_ns = st.st_mtim.tv_nsec;
    }
    for (;;) {
        usleep(100000);
        if (stat(trig, &st) == 0 && (st.st_mtim.tv_sec != seen
                                     || st.st_mtim.tv_nsec != seen_ns)) {
            seen = st.st_mtim.tv_sec;
            seen_ns = st.st_mtim.tv_nsec;
            dump(dir);
        }
    }
    return NULL;
}

static void start(void)
{
    static char dir[2048];
    const char *d = getenv("MALLOCPROBE_DIR");
    pthread_t t;
    pthread_attr_t a;

    if (!d) {
        return;
    }
    snprintf(dir, sizeof(dir), "%s", d);
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 64 * 1024);
    pthread_create(&t, &a, watch, dir);
    pthread_attr_destroy(&a);
}

__attribute__((constructor)) static void init(void)
{
    pthread_atfork(NULL, NULL, start);
}
