#pragma once
// The mini pipeline of seed 000 (DESIGN.md §6.1): Reader -> Parser -> Validator -> DB.Sink,
// with unparsable lines going from Parser to DeadLetter. The scenario file declares the tree
// (Root one_for_one 3 in 5 s -> [Sink.Supervisor one_for_one -> [DB.Sink, DeadLetter],
// Input.Supervisor rest_for_one -> [Reader, Parser, Validator]]); these are its workers,
// registered in the catalogue as pipeline.reader, pipeline.parser, pipeline.validator,
// pipeline.sink and pipeline.dead_letter.
//
// Each stage registers a name in init (seed 000's module names by default) and sends to the
// next stage by name: a send while that name is unregistered (the stage is down or restarting)
// is dropped by the kernel. Every line carries a sequence number and the stages trace the line
// protocol of properties/conservation.hpp, so conservation is computed from the trace alone:
// a Validator crash loses the line that crashed it (line_lost, why crashed), lines left in a
// dying stage's mailbox and lines sent to a missing stage are kernel drops.
//
// DB.Sink keeps a buffer in its state, as seed 000's does (it only prepends each event to a
// list, where a real one would batch-insert): a line it takes is traced line_buffered, and only
// the flush traces line_stored. It flushes when the buffer holds `batch` lines or when its
// oldest line has waited `flush_every`, whichever comes first; a flush is instantaneous. A sink
// that ends (crash, kill, shutdown) with lines in its buffer loses them, and conservation names
// them `sink_buffer`.

#include <cstdint>
#include <memory>
#include <string>

#include "sim/process.hpp"
#include "sim/rng.hpp"

namespace lic::scenarios::pipeline {

/// Line seqs are unique in a run: the Reader with pid P numbers its lines P * kSeqsPerReader
/// + 1, + 2, ... (42000000017: the 17th line of the Reader with pid 42). Not the Reader's start
/// count: a restarted Input.Supervisor starts counting its children's starts again.
inline constexpr std::int64_t kSeqsPerReader = 1'000'000'000;

struct ReaderConfig {
  Duration interval = kMillisecond * 50;  ///< one line per tick, the first one interval after init
  Ratio negative{};    ///< share of all lines that parse with v < 0
  Ratio unparsable{};  ///< share of all lines that are garbage
  Atom name{"Input.Reader"};
  Atom to{"Input.Parser"};
};

struct ParserConfig {
  Atom name{"Input.Parser"};
  Atom to{"Input.Validator"};
  Atom dead_letter{"DeadLetter.Sink"};
};

struct ValidatorConfig {
  Atom name{"Input.Validator"};
  Atom to{"DB.Sink"};
};

/// DeadLetter: it registers `name` and collects.
struct SinkConfig {
  Atom name;
};

/// DB.Sink: it registers `name`, buffers, and flushes. The defaults are seed 002's batch sink
/// (100 items, 200 ms); seed 000's sink gives neither.
struct DbSinkConfig {
  Atom name{"DB.Sink"};
  std::int64_t batch = 100;                     ///< flush when the buffer holds this many (1 or more)
  Duration flush_every = kMillisecond * 200;  ///< flush when the oldest buffered line is this old
};

/// Why the mix cannot be drawn exactly ("" when it can): negative + unparsable over 100 %, or
/// denominators whose product does not fit 64 bits.
std::string check_mix(Ratio negative, Ratio unparsable);

/// Why `text` is not a `k,v` line with an integer v (not_two_fields, empty_key,
/// not_an_integer), or the empty atom when it is one; `key` and `value` get its parts.
Atom parse_line(const std::string& text, std::string& key, std::int64_t& value);

std::unique_ptr<Behaviour> reader(const ReaderConfig& c);
std::unique_ptr<Behaviour> parser(const ParserConfig& c);
std::unique_ptr<Behaviour> validator(const ValidatorConfig& c);
std::unique_ptr<Behaviour> sink(const DbSinkConfig& c);
std::unique_ptr<Behaviour> dead_letter(const SinkConfig& c);

}  // namespace lic::scenarios::pipeline
