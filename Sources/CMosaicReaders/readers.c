#include "CMosaicReaders.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

__thread mosaic_reader *mosaic_this_reader __attribute__((tls_model("initial-exec"))) = NULL;

intptr_t mosaic_open_override_scopes = 0;

static mosaic_reader *records = NULL;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static pthread_key_t thread_end_key;

/// Runs when a thread that read ends: its record, with no section open, goes to the next new thread.
static void release_record(void *record) {
    mosaic_reader *reader = record;
    __atomic_store_n(&reader->owned, 0, __ATOMIC_RELEASE);
}

static void setup(void) {
    if (pthread_key_create(&thread_end_key, release_record) != 0) abort();
}

mosaic_reader *mosaic_reader_attach(void) {
    pthread_once(&setup_once, setup);
    mosaic_reader *reader = NULL;
    for (mosaic_reader *record = __atomic_load_n(&records, __ATOMIC_ACQUIRE); record; record = record->next) {
        uintptr_t free = 0;
        if (__atomic_compare_exchange_n(&record->owned, &free, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            reader = record;
            break;
        }
    }
    if (reader == NULL) {
        // A record of its own, on cache lines of its own: no other thread's writes land near it.
        if (posix_memalign((void **)&reader, 128, sizeof(mosaic_reader)) != 0) abort();
        *reader = (mosaic_reader){.owned = 1};
        mosaic_reader *head = __atomic_load_n(&records, __ATOMIC_RELAXED);
        do {
            reader->next = head;
        } while (!__atomic_compare_exchange_n(&records, &head, reader, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
    }
    pthread_setspecific(thread_end_key, reader);
    mosaic_this_reader = reader;
    return reader;
}

static int names_one_of(uintptr_t name, const uintptr_t *objects, size_t count) {
    if (name == 0) return 0;
    if (name == MOSAIC_READING_ANY) return 1;
    size_t low = 0, high = count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (objects[middle] == name) return 1;
        if (objects[middle] < name) low = middle + 1; else high = middle;
    }
    return 0;
}

int mosaic_wait_for_readers(const uintptr_t *objects, size_t count) {
    mosaic_reader *self = mosaic_this_reader;
    if (self) {
        uintptr_t depth = self->depth < MOSAIC_READ_NAMES ? self->depth : MOSAIC_READ_NAMES;
        for (uintptr_t level = 0; level < depth; level++) {
            if (names_one_of(self->levels[level].reading, objects, count)) return 0;
        }
    }
    for (mosaic_reader *record = __atomic_load_n(&records, __ATOMIC_ACQUIRE); record; record = record->next) {
        if (record == self) continue;
        for (int index = 0; index < MOSAIC_READ_NAMES; index++) {
            mosaic_read_level *level = &record->levels[index];
            // The count before the name: a reader clears a name before it counts the end, so a name seen after
            // this load belongs to a section that had not ended when the count was loaded.
            uintptr_t ended = __atomic_load_n(&level->ended, __ATOMIC_ACQUIRE);
            if (!names_one_of(__atomic_load_n(&level->reading, __ATOMIC_SEQ_CST), objects, count)) continue;
            while (__atomic_load_n(&level->ended, __ATOMIC_ACQUIRE) == ended) sched_yield();
        }
    }
    return 1;
}
