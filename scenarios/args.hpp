#pragma once
// Arguments of a named thing in a scenario file: a behaviour (`behaviour: flaky, args: {mtbf:
// 5s}`) or a check (`{restarts: {of: /root/a, max: 3}}`). Each is declared once with a schema
// (ArgInfo: name, type, default, help) and read with Args, which parses every value by its type
// and reports each mistake at its place in the file. The built-in catalogue and a user's own
// behaviours and checks (docs/library.md) use the same two types.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenarios/scenario.hpp"
#include "sim/process.hpp"

namespace lic::scenarios {

/// One argument a behaviour or a check takes.
struct ArgInfo {
  std::string name;
  /// What a value is, and how Args reads it: "duration" (250ms), "ratio" (2%), "int", "bool",
  /// "string", "reason" (an exit reason), "init results" (ok | ignore | error | error:W |
  /// stop:R, one or a list), "path" (a tree path: validate checks it names something in the
  /// tree), "list" (a list of words, or one word), or one of a few words, written with `|`
  /// between them ("immediate|backoff", read with Args::choice; another word is refused with
  /// "did you mean").
  std::string type;
  /// The default, as a file would write it. Empty: the argument is required (unless optional).
  std::string fallback;
  std::string help;
  /// Not required and without a default: absent unless given (Args::given tells).
  bool optional = false;
  /// A number that names something (an advisory lock's id) rather than one that sizes it (a
  /// count, a rate, a capacity, a timeout): the shrinker leaves it as written, where it makes
  /// every other number of a behaviour smaller (docs/shrinking.md).
  bool names = false;
  /// A "string" that is the name its process registers ("-" or empty: none).
  bool registers = false;
  /// A "string" that is a name another process registers (where it sends, links or calls):
  /// validate refuses one that no behaviour of the file registers, when every behaviour of the
  /// file is a built-in one (a behaviour of one's own may register names it does not declare).
  bool refers = false;
  /// A "duration" that paces steady work (a reader's line every `interval`, a client's request):
  /// longer, the run makes fewer events of the same kind, so the shrinker also tries it longer
  /// (docs/shrinking.md). A timeout or a latency is not one: longer, it is another system.
  bool paces = false;

  bool required() const { return fallback.empty() && !optional; }
};

/// `a`, marked as the name its process registers.
inline ArgInfo registered_as(ArgInfo a) {
  a.registers = true;
  return a;
}
/// `a`, marked as a name another process registers.
inline ArgInfo refers_to(ArgInfo a) {
  a.refers = true;
  return a;
}

/// `a`, marked as the pace of steady work.
inline ArgInfo pacing(ArgInfo a) {
  a.paces = true;
  return a;
}

/// The argument types Args reads (besides the "a|b|c" choices).
const std::vector<std::string>& arg_types();
/// The words of a "one of" type ("immediate|backoff": immediate, backoff); empty for any other
/// type.
std::vector<std::string> choices_of(const std::string& type);

/// Reads the arguments given to one behaviour or check against its schema. Every mistake is
/// appended to `errors` at its mark and the reading goes on (a zero value stands in), so one
/// pass reports all of them: unknown and repeated names (with "did you mean"), missing required
/// ones, lists where one value is expected, and bad values.
class Args {
 public:
  /// `owner` names it in messages ("'flaky'", "check 'restarts'"); `at` is where the reference
  /// stands (for missing arguments).
  Args(std::string owner, Mark at, const std::vector<std::pair<std::string, ArgValue>>& given,
       const std::vector<ArgInfo>& schema, std::vector<Diagnostic>& errors);

  Duration duration(std::string_view name);
  /// A duration that must be more than zero.
  Duration positive(std::string_view name);
  Ratio ratio(std::string_view name);
  std::int64_t integer(std::string_view name);
  bool flag(std::string_view name);
  /// A non-empty name.
  Atom atom(std::string_view name);
  /// A name, or nothing when it is `-` (the default of an optional name).
  Atom optional_atom(std::string_view name);
  /// The text as written (a "string" argument that may be empty).
  std::string text(std::string_view name);
  /// A tree path (the scenario's validator checks it names something).
  std::string path(std::string_view name);
  /// A tree path that names a supervisor, a lifecycle supervisor or a lifecycle service, not a
  /// worker (the validator checks it).
  std::string supervisor_path(std::string_view name);
  Reason reason(std::string_view name);
  std::vector<InitResult> init_results(std::string_view name);
  /// A "list" argument: its words (one word reads as a list of one).
  std::vector<std::string> words(std::string_view name);
  /// A "one of" argument (type "a|b|c"): the word given, one of those.
  std::string choice(std::string_view name);

  /// Whether the file gave the argument (an optional one is absent otherwise).
  bool given(std::string_view name) const;
  /// A value that parsed but is out of range: the error stands at the argument.
  void invalid(std::string_view name, const std::string& message);
  /// A mistake about the whole reference (e.g. "give max or count"): at the reference.
  void invalid(const std::string& message);
  /// Whether any mistake was found in these arguments.
  bool failed() const { return errors_.size() > errors_before_; }

 private:
  const ArgInfo& info(std::string_view name, std::string_view type) const;
  const ArgValue* find(std::string_view name) const;
  void check_names();
  const std::string* text_of(const ArgInfo& a);
  template <class T>
  T scalar(std::string_view name, std::string_view type);
  void add(Mark at, std::string message) { errors_.push_back({at, std::move(message)}); }

  std::string owner_;
  Mark at_;
  const std::vector<std::pair<std::string, ArgValue>>& given_;
  const std::vector<ArgInfo>& schema_;
  std::vector<Diagnostic>& errors_;
  std::size_t errors_before_;
};

/// Why `text` is not a value of `type` (as a file would write it), or "" when it is one.
std::string check_value(const std::string& type, const std::string& text);

/// parse_reason's forms, and `shutdown:T` / `error:W` for {shutdown,T} / {error,W} (no quotes
/// needed in YAML); false with `error` saying why.
bool parse_reason_arg(const std::string& text, Reason& out, std::string& error);

/// An init result: ok, ignore, error ({error,init_failed}), error:What or stop:Reason (a stock
/// worker's `init` argument, a supervisor's `init` flag); false with `error` saying why.
bool parse_init_result(const std::string& text, InitResult& out, std::string& error);

}  // namespace lic::scenarios
