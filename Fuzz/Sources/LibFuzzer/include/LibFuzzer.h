#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (linked in by -sanitize=fuzzer): parses the command line and runs `callback` on each input.
/// Called from our own main, since a Swift executable's main takes the place of libFuzzer's.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
