// Errors are values: Result<T> carries either a value or an Error with its context.
// Used by every parser and check in the project so that no bad input throws or aborts.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace pipeworks::sched {

// A message plus, where it is known, the 0-based column inside the parsed text.
struct Error {
  Error(std::string text, std::optional<std::size_t> at = std::nullopt)  // NOLINT(google-explicit-constructor)
      : message(std::move(text)), column(at) {}
  Error(const char* text) : message(text) {}  // NOLINT(google-explicit-constructor)
  std::string message;
  std::optional<std::size_t> column;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& { return checked(); }
  T& value() & { return const_cast<T&>(checked()); }
  T&& value() && { return std::move(const_cast<T&>(checked())); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const Error& error() const {
    if (ok()) throw std::logic_error("Result::error() called on a value");
    return std::get<Error>(state_);
  }

 private:
  const T& checked() const {
    if (!ok()) throw std::logic_error("Result::value() called on an error: " + std::get<Error>(state_).message);
    return std::get<T>(state_);
  }
  std::variant<T, Error> state_;
};

// Result of an operation that produces nothing but may fail.
struct Ok {};
using Status = Result<Ok>;

}  // namespace pipeworks::sched
