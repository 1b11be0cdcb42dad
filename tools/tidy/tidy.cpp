// lic-tidy: determinism is a test, not a promise (STYLE.md §5). Fails on calls in sim/ and
// supervision/ that would let the wall clock, unseeded or library-defined randomness, threads,
// real-time waits or unordered iteration reach the simulation, and names the replacement.
// sim/fiber.cpp is exempt (it must implement Boost.Fiber's algorithm interface), as are tests.
//
//   lic-tidy ROOT        scans ROOT/sim and ROOT/supervision; exit 0 clean, 1 violations, 2 usage

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Rule {
  const char* pattern;
  const char* what;
  const char* instead;
};

const Rule kRules[] = {
    {R"(\b(system_clock|steady_clock|high_resolution_clock)\b)", "a wall clock",
     "Simulation::now() / Context::now()"},
    {R"(\btime\s*\(\s*(NULL|nullptr|0)\s*\))", "a wall clock", "Simulation::now()"},
    {R"(\brandom_device\b)", "unseeded randomness", "an Rng stream derived from the root seed"},
    {R"((^|[^\w:.>])s?rand\s*\()", "unseeded randomness", "an Rng stream derived from the root seed"},
    {R"(\bstd::(uniform_int|uniform_real|normal|exponential|bernoulli|poisson|discrete|geometric)_distribution\b|\bstd::uniform_)",
     "a std distribution (its output differs between standard libraries)",
     "Rng::uniform / chance / exponential / jitter"},
    {R"(\bstd::(thread|jthread|async)\b)", "a thread", "nothing: the simulation runs on one thread"},
    {R"(\b(sleep_for|sleep_until|wait_for|wait_until)\b)", "a real-time wait",
     "Context::sleep or a receive timeout (virtual time)"},
    {R"(\bunordered_(map|set|multimap|multiset)\b)", "unordered iteration",
     "std::map / std::set / a vector, whose order is the same in every run"},
};

/// Blanks out comments and string/char literals, keeping line and column positions.
std::string strip(const std::string& src) {
  std::string out = src;
  enum { code, line_comment, block_comment, string_lit, char_lit } state = code;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char c = src[i];
    const char n = i + 1 < src.size() ? src[i + 1] : '\0';
    switch (state) {
      case code:
        if (c == '/' && n == '/') state = line_comment, out[i] = ' ';
        else if (c == '/' && n == '*') state = block_comment, out[i] = ' ';
        else if (c == '"') state = string_lit;
        else if (c == '\'') state = char_lit;
        break;
      case line_comment:
        if (c == '\n') state = code;
        else out[i] = ' ';
        break;
      case block_comment:
        if (c == '*' && n == '/') {
          out[i] = out[i + 1] = ' ';
          ++i;
          state = code;
        } else if (c != '\n') {
          out[i] = ' ';
        }
        break;
      case string_lit:
      case char_lit:
        if (c == '\\') {
          out[i] = ' ';
          if (i + 1 < out.size() && src[i + 1] != '\n') out[++i] = ' ';
        } else if ((state == string_lit && c == '"') || (state == char_lit && c == '\'')) {
          state = code;
        } else if (c != '\n') {
          out[i] = ' ';
        }
        break;
    }
  }
  return out;
}

bool exempt(const fs::path& rel) {
  const std::string name = rel.filename().string();
  return rel == fs::path("sim/fiber.cpp") || name.ends_with("_test.cpp");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || std::string(argv[1]) == "--help") {
    std::fprintf(argc == 2 ? stdout : stderr, "usage: lic-tidy ROOT\n");
    return argc == 2 ? 0 : 2;
  }
  const fs::path root = argv[1];
  std::vector<std::regex> regexes;
  for (const Rule& r : kRules) regexes.emplace_back(r.pattern);
  std::set<fs::path> files;  // sorted: the report reads the same every time
  for (const char* dir : {"sim", "supervision"}) {
    const fs::path d = root / dir;
    if (!fs::exists(d)) continue;
    for (const auto& e : fs::recursive_directory_iterator(d)) {
      const auto ext = e.path().extension();
      if (e.is_regular_file() && (ext == ".cpp" || ext == ".hpp" || ext == ".h")) files.insert(e.path());
    }
  }
  int violations = 0;
  for (const fs::path& f : files) {
    const fs::path rel = fs::relative(f, root);
    if (exempt(rel)) continue;
    std::ifstream in(f);
    std::stringstream buf;
    buf << in.rdbuf();
    std::istringstream lines(strip(buf.str()));
    std::string line;
    for (int lineno = 1; std::getline(lines, line); ++lineno) {
      for (std::size_t k = 0; k < regexes.size(); ++k) {
        std::smatch m;
        if (!std::regex_search(line, m, regexes[k])) continue;
        const Rule& r = kRules[k];
        std::printf("%s:%d:%zu: banned: %s ('%s'); use %s\n", rel.c_str(), lineno,
                    static_cast<std::size_t>(m.position(0)) + 1, r.what, m.str(0).c_str(), r.instead);
        ++violations;
      }
    }
  }
  if (violations > 0) {
    std::printf("lic-tidy: %d banned call(s) in sim/ or supervision/\n", violations);
    return 1;
  }
  std::printf("lic-tidy: %zu files clean\n", files.size());
  return 0;
}
