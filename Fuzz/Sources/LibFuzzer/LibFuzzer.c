// The declaration in include/LibFuzzer.h is all; libFuzzer itself comes with -sanitize=fuzzer.
#include "LibFuzzer.h"
