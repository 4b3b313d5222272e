# Sourced by callgrind.sh and budgets.sh: makes "$work/bench", the release benchmark binary without debug info
# (valgrind cannot read DWARF 5, and reads debug info slowly), and "$work/shim.so", preloaded into every run; with the
# Swift toolchain's llvm-objcopy and clang, so a machine with only the toolchain and valgrind runs it:
# - sigsuspend: valgrind crashes on async Swift, whose libdispatch passes sigsuspend a read-only mask; the shim hands
#   the real one a copy;
# - malloc and its kin: counted, and the count written to stderr as "heap allocations: N" when the process exits.
llvm-objcopy --strip-debug Benchmarks/.build/release/MosaicBenchmarks "$work/bench"
cat > "$work/shim.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int sigsuspend(const sigset_t *mask) {
    static int (*real)(const sigset_t *);
    if (!real) real = (int (*)(const sigset_t *))dlsym(RTLD_NEXT, "sigsuspend");
    sigset_t copy;
    memcpy(&copy, mask, sizeof copy);
    return real(&copy);
}
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
static unsigned long allocations;
static void counted(void) { __atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED); }
void *malloc(size_t size) { counted(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { counted(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { if (!pointer) counted(); return __libc_realloc(pointer, size); }
void *memalign(size_t alignment, size_t size) { counted(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { counted(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    counted();
    *out = __libc_memalign(alignment, size);
    return *out ? 0 : 12;
}
__attribute__((destructor)) static void report(void) {
    fprintf(stderr, "heap allocations: %lu\n", __atomic_load_n(&allocations, __ATOMIC_RELAXED));
}
C
clang -O2 -shared -fPIC -o "$work/shim.so" "$work/shim.c" -ldl
