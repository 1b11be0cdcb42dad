// TEMPORARY stand-in (not committed): the catalogue helper writes the real one.
#include "scenarios/catalogue.hpp"
#include "supervision/stock_worker.hpp"
namespace lic::scenarios {
const std::vector<BehaviourInfo>& catalogue() { static std::vector<BehaviourInfo> v; return v; }
BehaviourFactory make_behaviour(const BehaviourRef& ref, std::vector<Diagnostic>& errors) {
  supervision::WorkerConfig c;
  if (ref.name == "stall") c.stop = supervision::StopStyle::stall;
  else if (ref.name != "idle") { errors.push_back({ref.mark, "unknown behaviour '" + ref.name + "'"}); return {}; }
  return [c](const std::string&) { return std::make_unique<supervision::StockWorker>(c); };
}
}
