#include "properties/history.hpp"

#include <map>
#include <utility>

namespace lic::history {

OpId Client::invoke(Context& ctx, const std::string& f, const std::string& key, const std::string& arg, const std::string& arg2) {
  const OpId id = ++next_;
  std::vector<TraceField> fields{{kOp, id}, {kF, f}};
  if (!key.empty()) fields.push_back({kKey, key});
  if (!arg.empty()) fields.push_back({kArg, arg});
  if (!arg2.empty()) fields.push_back({kArg2, arg2});
  ctx.emit(kOpInvoke, std::move(fields));
  return id;
}

void Client::ok(Context& ctx, OpId id, const std::optional<std::string>& value) {
  std::vector<TraceField> fields{{kOp, id}};
  if (value) fields.push_back({kValue, *value});
  ctx.emit(kOpOk, std::move(fields));
}

void Client::fail(Context& ctx, OpId id) { ctx.emit(kOpFail, {{kOp, id}}); }

void Client::info(Context& ctx, OpId id) { ctx.emit(kOpInfo, {{kOp, id}}); }

void sent(Context& ctx, const std::string& id) { ctx.emit(kMsgSent, {{kMsgId, id}}); }

void received(Context& ctx, const std::string& id) { ctx.emit(kMsgReceived, {{kMsgId, id}}); }

Recorded read_history(const EventLog& events) {
  Recorded h;
  std::map<std::pair<Pid, OpId>, std::size_t> open;  // (client, id) -> index into h.ops
  std::map<std::pair<Pid, OpId>, bool> done;
  std::int64_t n = 0;
  for (const TraceEvent& e : events) {
    const std::int64_t t = n++;
    if (e.kind != EventKind::system) continue;
    const bool invoke = e.name == kOpInvoke;
    const bool completes = e.name == kOpOk || e.name == kOpFail || e.name == kOpInfo;
    if (!invoke && !completes) continue;
    const std::int64_t* id = e.field<std::int64_t>(kOp);
    if (id == nullptr) continue;
    const auto key = std::make_pair(e.pid, *id);
    if (invoke) {
      Op op;
      op.client = static_cast<std::int64_t>(e.pid.id);
      op.call = t;
      op.f = e.text(kF);
      op.key = e.text(kKey);
      op.arg = e.text(kArg);
      op.arg2 = e.text(kArg2);
      op.status = OpStatus::info;  // until it completes
      open[key] = h.ops.size();
      h.ops.push_back(std::move(op));
      h.invoked_at.push_back(static_cast<std::size_t>(t));
      h.completed_at.push_back(static_cast<std::size_t>(t));
      continue;
    }
    const auto it = open.find(key);
    if (it == open.end()) {
      if (h.mistake.empty()) {
        h.mistake = done.count(key) != 0 ? "operation " + std::to_string(*id) + " of " + std::string(e.label.name.text()) + " completed twice"
                                         : "a completion (" + std::string(e.name.text()) + ", op " + std::to_string(*id) + ") by " +
                                               std::string(e.label.name.text()) + ", which invoked no such operation";
        h.mistake_at = static_cast<std::size_t>(t);
      }
      continue;
    }
    Op& op = h.ops[it->second];
    op.ret = t;
    h.completed_at[it->second] = static_cast<std::size_t>(t);
    op.status = e.name == kOpOk ? OpStatus::ok : e.name == kOpFail ? OpStatus::fail : OpStatus::info;
    if (e.name == kOpOk && e.field<std::string>(kValue) != nullptr) op.value = *e.field<std::string>(kValue);
    open.erase(it);
    done[key] = true;
  }
  return h;
}

}  // namespace lic::history
