#pragma once
// A node's disk: what outlives its processes and its own crashes and restarts (a database's data
// directory, a queue's spool). Each node has one (Simulation::disk, Context::disk); a file is a
// value of any type, created empty on first open and kept until the run ends. Nothing is lost
// on a crash: a behaviour that models torn writes or an fsync window does so itself, in what it
// stores (docs/kernel.md, "Disks").

#include <any>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

namespace lic {

class Disk {
 public:
  /// The file `name`, default-constructed the first time. Opening it as another type than it
  /// was created with throws std::logic_error (a programming mistake, not a fault).
  template <class T>
  T& open(const std::string& name) {
    std::any& slot = files_[name];
    if (!slot.has_value()) slot = std::make_shared<T>();
    auto* p = std::any_cast<std::shared_ptr<T>>(&slot);
    if (p == nullptr) throw std::logic_error("disk file '" + name + "' was created as another type");
    return **p;
  }
  bool exists(const std::string& name) const { return files_.contains(name); }
  void erase(const std::string& name) { files_.erase(name); }

 private:
  std::map<std::string, std::any> files_;
};

}  // namespace lic
