#pragma once
// A small service of our own, tested with letitcrash: a read-through cache in front of a slow,
// flaky backend, and a client that keeps asking it. Each process is a behaviour that scenario
// files name (cache.backend, cache.server, cache.client), and `cache.answered` is a check of our
// own over the trace: every request a client made was answered, and few of them with
// "unavailable". The client records each get as a read in an operation history, and
// `cache.consistent` checks those reads against a model of our own (key k holds k * k).

#include <letitcrash/letitcrash.hpp>

namespace cache {

/// Adds the behaviours and the check to `r`.
void add_to(lic::Registry& r);

/// The built-in behaviours and checks, and ours.
const lic::Registry& registry();

}  // namespace cache
