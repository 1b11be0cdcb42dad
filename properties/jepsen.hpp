#pragma once
// Jepsen histories read into properties::Op histories, to check them with check_linearizable:
// Jepsen's etcd logs (a cas-register: read, write, cas) and its key-value logs (get, put, append
// by key), as Porcupine's test data holds them (conformance/porcupine/, MIT, from
// github.com/anishathalye/porcupine). They are read as Porcupine's own test reads them, with one
// difference of form: an operation with no completion in the log (Jepsen's :info) is left
// `info`, where Porcupine completes it with "unknown" at the end; a read that timed out
// (:fail :read :timed-out) constrains nothing in either.

#include <string>
#include <vector>

#include "properties/linearizability.hpp"

namespace lic::properties {

/// The operations of an etcd log (`INFO jepsen.util - P :invoke :read nil`, ...); times are line
/// numbers. `error`: the first line that is neither an operation nor ignorable, empty if none.
std::vector<Op> read_jepsen_etcd(const std::string& path, std::string& error);

/// The operations of a key-value log (`{:process 0, :type :invoke, :f :append, :key "4", ...}`).
std::vector<Op> read_jepsen_kv(const std::string& path, std::string& error);

}  // namespace lic::properties
