#pragma once
// Messages: a tag atom, an optional typed payload, and the fields system messages need
// (EXIT, DOWN, calls and replies). Nodes come from a per-thread free list, so sending a message
// costs no malloc in steady state.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include "sim/atom.hpp"
#include "sim/exit_reason.hpp"
#include "sim/pid.hpp"

namespace lic {

/// A move-only, type-erased value with a small inline buffer (no allocation up to 32 bytes).
class Payload {
 public:
  Payload() = default;
  template <class T, class D = std::decay_t<T>,
            class = std::enable_if_t<!std::is_same_v<D, Payload>>>
  Payload(T&& value) {  // NOLINT: implicit on purpose, `send(to, tag, value)`
    emplace<D>(std::forward<T>(value));
  }
  Payload(Payload&& o) noexcept { take(o); }
  Payload& operator=(Payload&& o) noexcept {
    if (this != &o) {
      reset();
      take(o);
    }
    return *this;
  }
  Payload(const Payload&) = delete;
  Payload& operator=(const Payload&) = delete;
  ~Payload() { reset(); }

  bool empty() const { return ops_ == nullptr; }
  template <class T>
  bool is() const {
    return ops_ == &ops_for<T>;
  }
  /// The value if it holds a T, else nullptr.
  template <class T>
  const T* get() const {
    if (!is<T>()) return nullptr;
    return static_cast<const T*>(ptr());
  }
  template <class T>
  T* get() {
    if (!is<T>()) return nullptr;
    return static_cast<T*>(ptr());
  }
  /// Whether the value can be copied (the network duplicates a message only then).
  bool copyable() const { return ops_ == nullptr || ops_->copy != nullptr; }
  /// A copy of the value; empty if it cannot be copied.
  Payload copy() const {
    Payload out;
    if (ops_ != nullptr && ops_->copy != nullptr) {
      ops_->copy(out, *this);
      out.ops_ = ops_;
      out.inline_ = inline_;
    }
    return out;
  }
  void reset() {
    if (ops_ != nullptr) {
      ops_->destroy(*this);
      ops_ = nullptr;
    }
  }

 private:
  static constexpr std::size_t kInline = 32;
  struct Ops {
    void (*destroy)(Payload&);
    void (*move)(Payload& dst, Payload& src);  // into empty dst
    void (*copy)(Payload& dst, const Payload& src);  // into empty dst; null if not copyable
  };
  template <class T>
  static constexpr bool kFits = sizeof(T) <= kInline && alignof(T) <= alignof(std::max_align_t) &&
                                std::is_nothrow_move_constructible_v<T>;
  template <class T>
  static void destroy_as(Payload& p) {
    if constexpr (kFits<T>) {
      std::launder(reinterpret_cast<T*>(p.buf_))->~T();
    } else {
      delete *std::launder(reinterpret_cast<T**>(p.buf_));
    }
  }
  template <class T>
  static void move_as(Payload& dst, Payload& src) {
    if constexpr (kFits<T>) {
      T* s = std::launder(reinterpret_cast<T*>(src.buf_));
      ::new (static_cast<void*>(dst.buf_)) T(std::move(*s));
      s->~T();
    } else {
      ::new (static_cast<void*>(dst.buf_)) T*(*std::launder(reinterpret_cast<T**>(src.buf_)));
    }
  }
  template <class T>
  static void copy_as(Payload& dst, const Payload& src) {
    if constexpr (kFits<T>) {
      ::new (static_cast<void*>(dst.buf_)) T(*std::launder(reinterpret_cast<const T*>(src.buf_)));
    } else {
      ::new (static_cast<void*>(dst.buf_)) T*(new T(**std::launder(reinterpret_cast<T* const*>(src.buf_))));
    }
  }
  template <class T>
  static constexpr auto copy_fn() {
    using Fn = void (*)(Payload&, const Payload&);
    if constexpr (std::is_copy_constructible_v<T>) {
      return Fn{&copy_as<T>};
    } else {
      return Fn{nullptr};
    }
  }
  template <class T>
  static constexpr Ops ops_for{&destroy_as<T>, &move_as<T>, copy_fn<T>()};

  template <class T, class... A>
  void emplace(A&&... args) {
    if constexpr (kFits<T>) {
      ::new (static_cast<void*>(buf_)) T(std::forward<A>(args)...);
    } else {
      ::new (static_cast<void*>(buf_)) T*(new T(std::forward<A>(args)...));
    }
    ops_ = &ops_for<T>;
    inline_ = kFits<T>;
  }
  void take(Payload& o) {
    if (o.ops_ == nullptr) return;
    o.ops_->move(*this, o);
    ops_ = o.ops_;
    inline_ = o.inline_;
    o.ops_ = nullptr;
  }
  const void* ptr() const {
    return inline_ ? static_cast<const void*>(buf_)
                       : *std::launder(reinterpret_cast<void* const*>(buf_));
  }
  void* ptr() {
    return inline_ ? static_cast<void*>(buf_) : *std::launder(reinterpret_cast<void**>(buf_));
  }

  alignas(std::max_align_t) unsigned char buf_[kInline];
  const Ops* ops_ = nullptr;
  bool inline_ = true;
};

enum class MsgKind : std::uint8_t {
  plain,  ///< an ordinary message: tag + payload
  call,   ///< a gen_server call request; `ref` identifies it, `from` is the caller
  cast,   ///< a gen_server cast
  reply,  ///< the reply to call `ref`
  exit,   ///< {'EXIT', from, reason}: an exit signal turned into a message (trap_exit)
  down,   ///< {'DOWN', ref, process, from, reason}: a monitor fired
};

struct Message {
  MsgKind kind = MsgKind::plain;
  Atom tag;
  Pid from;
  Ref ref;
  Reason reason;
  std::uint64_t id = 0;  ///< per-simulation sequence number; the trace names messages by it
  Payload payload;
  Message* next = nullptr;  ///< mailbox link (kernel only)

  template <class T>
  const T* get() const {
    return payload.get<T>();
  }
};

struct MessageDeleter {
  void operator()(Message* m) const noexcept;
};
using MessagePtr = std::unique_ptr<Message, MessageDeleter>;

/// A fresh message from the per-thread free list.
MessagePtr make_message();

/// A copy of `m` (same id: the network's duplicate of one message), or null if its payload
/// cannot be copied.
MessagePtr copy_message(const Message& m);

}  // namespace lic
