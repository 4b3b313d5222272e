// Nothing to call: width.c sets Swift Testing's parallelization width when the test bundle loads.
