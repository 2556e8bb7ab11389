// sim/message.hpp — what the network carries: a Message with a Payload body.
//
// Models derive their message bodies from `Payload` (preferably `final`, so
// that `Message::as<T>()` is one type_info comparison) and share them by
// `PayloadPtr`: sending copies a pointer, not the body.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>

#include "sim/basics.hpp"
#include "sim/time.hpp"

namespace sim {

/// Base of every message body. `describe()` is for traces and debugging.
class Payload {
 public:
  virtual ~Payload() = default;
  virtual std::string describe() const = 0;
};
using PayloadPtr = std::shared_ptr<const Payload>;

struct Message {
  NodeId from = kNoNode;
  NodeId to = kNoNode;
  std::uint64_t id = 0;        ///< unique per simulation, > 0
  std::uint64_t reply_to = 0;  ///< id of the request this answers, or 0
  Time sent_at{0};             ///< true time of sending
  PayloadPtr body;

  /// The body as a T, or nullptr. For a `final` T one type_info comparison
  /// decides (a T's dynamic type can only be T), cheaper than dynamic_cast,
  /// which walks the class hierarchy on every miss.
  template <class T>
  const T* as() const {
    const Payload* p = body.get();
    if (p == nullptr) return nullptr;
    if constexpr (std::is_final_v<T>) {
      return typeid(*p) == typeid(T) ? static_cast<const T*>(p) : nullptr;
    } else {
      return dynamic_cast<const T*>(p);
    }
  }
};

}  // namespace sim
