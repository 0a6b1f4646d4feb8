#pragma once
// Result<T>: a value or an error message, for the config-time functions of this library (no exceptions
// cross the library boundary).

#include <optional>
#include <string>
#include <utility>

namespace gslb::metrics {

// A value or an error message (std::expected is C++23; Debian 12's GCC 12 has no <expected> in C++20).
template <class T>
class Result {
  public:
    static Result success(T value) { return Result(std::move(value), {}); }
    static Result failure(std::string error) { return Result(std::nullopt, std::move(error)); }

    bool ok() const noexcept { return value_.has_value(); }
    explicit operator bool() const noexcept { return ok(); }
    const T& value() const& { return *value_; }  // precondition: ok()
    T&& value() && { return std::move(*value_); }
    const T& operator*() const& { return *value_; }
    const T* operator->() const { return &*value_; }
    const std::string& error() const noexcept { return error_; }  // empty when ok()

  private:
    Result(std::optional<T> v, std::string e) : value_(std::move(v)), error_(std::move(e)) {}
    std::optional<T> value_;
    std::string error_;
};

}  // namespace gslb::metrics
