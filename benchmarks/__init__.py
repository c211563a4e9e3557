"""Performance and context-quality benchmarks (`make bench`, not part of `make test`)."""
