#pragma once
// Result<T>: the value a load path returns, or an Error that says why it failed.
// Hot jobs return bool instead (see sampling.h); Result is for files, scenarios and packets.

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace posecast {

// A failure with a message meant for a person: it names the file, the object and the reason,
// e.g. "Fox.glb: animations[1].samplers[3].input: key times are not increasing".
struct Error {
  std::string message;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : storage_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : storage_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return storage_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // Precondition: ok().
  T& value() & {
    assert(ok());
    return std::get<0>(storage_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(storage_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(storage_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // Precondition: !ok().
  const Error& error() const {
    assert(!ok());
    return std::get<1>(storage_);
  }

 private:
  std::variant<T, Error> storage_;
};

// Result<void> equivalent: success, or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error.message)), failed_(true) {}  // NOLINT
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  // Precondition: !ok().
  Error error() const { return Error{error_}; }

 private:
  std::string error_;
  bool failed_ = false;
};

}  // namespace posecast
