// Read sections without a shared write: which objects each thread is reading, kept in memory of that thread's own.
//
// A reader names the object it reads (a service box) in its thread's record before it loads what the object
// publishes, and clears the name after; a writer that unpublishes something then waits only for the threads whose
// records name its objects. Naming is one sequentially consistent store to a cache line only that thread writes, so
// readers on several threads never contend (a shared reader count made every read two locked additions to one
// line that all readers wrote).
//
// Written in C because Swift has no thread-local variables, and a thread's record must be found in two
// instructions for a read to stay within a few nanoseconds. For the same reason the process's count of open override
// scopes lives here too: every resolve reads it, and a Swift global costs a call that checks its initialization.
#ifndef C_MOSAIC_READERS_H
#define C_MOSAIC_READERS_H

#include <stddef.h>
#include <stdint.h>

/// How many nested read sections name their object; deeper ones share the last name, which matches every object.
#define MOSAIC_READ_NAMES 12

/// One level of nesting in a thread's record.
typedef struct mosaic_read_level {
    /// What the open read section at this level reads; 0 when none is open.
    uintptr_t reading;
    /// Incremented when a read section at this level ends: a writer that saw a name waits for this to change.
    uintptr_t ended;
} mosaic_read_level;

/// One thread's record. Only its thread writes it; writers load it.
typedef struct mosaic_reader {
    /// How many read sections the thread is in.
    uintptr_t depth;
    /// Its read sections, outermost first.
    mosaic_read_level levels[MOSAIC_READ_NAMES];
    /// The next record; records are never freed, and a thread's record is reused after the thread ends.
    struct mosaic_reader *next;
    /// 1 while a thread owns the record.
    uintptr_t owned;
} mosaic_reader;

/// The name that matches every object: read sections nested deeper than `MOSAIC_READ_NAMES`.
#define MOSAIC_READING_ANY UINTPTR_MAX

extern __thread mosaic_reader *mosaic_this_reader __attribute__((tls_model("initial-exec")));

/// The calling thread's record, made (or reused) on its first read section.
mosaic_reader *mosaic_reader_attach(void);

/// Waits until no other thread is in a read section that began before this call and reads one of `objects`
/// (`count` of them, sorted ascending), which the caller has unpublished with sequentially consistent stores.
/// Returns 0 without waiting when the calling thread itself is reading one of them (it cannot wait for itself),
/// 1 otherwise.
int mosaic_wait_for_readers(const uintptr_t *objects, size_t count);

/// Begins a read section on `object` (not 0); what the reader then loads from `object` with sequentially consistent
/// ordering stays valid until `mosaic_read_end`, provided writers unpublish before `mosaic_wait_for_readers` and
/// free after it.
static inline __attribute__((always_inline)) void mosaic_read_begin(uintptr_t object) {
    mosaic_reader *reader = mosaic_this_reader;
    if (__builtin_expect(reader == NULL, 0)) reader = mosaic_reader_attach();
    uintptr_t depth = reader->depth;
    reader->depth = depth + 1;
    // Sequentially consistent, like the writer's unpublishing store and both sides' loads: either the writer sees
    // this name, or this reader sees what the writer unpublished.
    if (__builtin_expect(depth < MOSAIC_READ_NAMES - 1, 1)) {
        __atomic_store_n(&reader->levels[depth].reading, object, __ATOMIC_SEQ_CST);
    } else if (depth == MOSAIC_READ_NAMES - 1) {
        __atomic_store_n(&reader->levels[depth].reading, MOSAIC_READING_ANY, __ATOMIC_SEQ_CST);
    }
}

/// Ends the innermost read section: nothing read in it is used after this.
static inline __attribute__((always_inline)) void mosaic_read_end(void) {
    mosaic_reader *reader = mosaic_this_reader;
    uintptr_t depth = reader->depth - 1;
    reader->depth = depth;
    // Deeper sections than the record names end inside the one named "any", and count nothing.
    if (__builtin_expect(depth < MOSAIC_READ_NAMES, 1)) {
        mosaic_read_level *level = &reader->levels[depth];
        // Release, both: every read of the section happens before a writer that sees either frees anything.
        __atomic_store_n(&level->reading, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&level->ended, level->ended + 1, __ATOMIC_RELEASE);
    }
}

/// How many override scopes are open in the process (MosaicTesting's `withOverrides`). Every resolve reads it, and
/// here it is a plain load: a Swift global is reached through a call that checks its lazy initialization.
extern intptr_t mosaic_open_override_scopes;

/// Whether any override scope is open in the process.
static inline __attribute__((always_inline)) int mosaic_override_scopes_are_open(void) {
    return __atomic_load_n(&mosaic_open_override_scopes, __ATOMIC_RELAXED) > 0;
}

/// Counts an override scope opening (`delta` 1) or closing (-1).
static inline void mosaic_count_override_scopes(intptr_t delta) {
    __atomic_fetch_add(&mosaic_open_override_scopes, delta, __ATOMIC_RELAXED);
}

#endif
