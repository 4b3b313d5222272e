// How many test cases Swift Testing runs at once: twice the cores, unless SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH
// is set already. Swift Testing 6.3 starts every test case at once by default; on a 2-core machine that starved the
// test harness's activations past their 2-second limits in three runs of the suite out of five; at twice the cores,
// none of 10. Swift Testing reads the variable once, before any test runs, so it is set when the test bundle loads.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void mosaic_limit_test_parallelism(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    char width[24];
    snprintf(width, sizeof width, "%ld", cores > 0 ? cores * 2 : 4);
    setenv("SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH", width, 0);
}
