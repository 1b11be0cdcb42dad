#include "sim/message.hpp"

namespace lic {
namespace {

struct FreeNode {
  FreeNode* next;
};
static_assert(sizeof(FreeNode) <= sizeof(Message));

// Per-thread, so parallel sweeps need no lock.
struct FreeList {
  FreeNode* head = nullptr;
  ~FreeList() {
    while (head != nullptr) {
      FreeNode* n = head->next;
      ::operator delete(static_cast<void*>(head));
      head = n;
    }
  }
};
thread_local FreeList t_free;

}  // namespace

void MessageDeleter::operator()(Message* m) const noexcept {
  m->~Message();
  t_free.head = ::new (static_cast<void*>(m)) FreeNode{t_free.head};
}

MessagePtr make_message() {
  void* storage;
  if (t_free.head != nullptr) {
    FreeNode* n = t_free.head;
    t_free.head = n->next;
    storage = n;
  } else {
    storage = ::operator new(sizeof(Message));
  }
  return MessagePtr(::new (storage) Message());
}

MessagePtr copy_message(const Message& m) {
  if (!m.payload.copyable()) return {};
  MessagePtr c = make_message();
  c->kind = m.kind;
  c->tag = m.tag;
  c->from = m.from;
  c->ref = m.ref;
  c->reason = m.reason;
  c->id = m.id;
  c->payload = m.payload.copy();
  return c;
}

}  // namespace lic
