#pragma once
// Internal: typed, path-naming access to JSON fields for the scenario parser. Every getter
// returns a value or an Error "FILE: PATH: reason"; none throws. Header-only and included by
// scenario.cpp alone, so the JSON templates are instantiated once.

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <initializer_list>
#include <optional>
#include <string>

#include "posecast/result.h"

namespace posecast::sim {

// Objects keep their file order (model ids and mask ids follow it).
using Json = nlohmann::ordered_json;

class JsonFields {
 public:
  explicit JsonFields(std::string file) : file_(std::move(file)) {}

  Error error(const std::string& path, const std::string& why) const {
    return Error{file_ + ": " + (path.empty() ? std::string("(top level)") : path) + ": " + why};
  }
  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  // Rejects members not in `allowed` (catches misspelt field names).
  Status only(const Json& object, const std::string& path,
              std::initializer_list<const char*> allowed) const;

  Result<int64_t> integer(const Json& object, const std::string& path, const char* key,
                          int64_t min, int64_t max, std::optional<int64_t> fallback) const;
  Result<double> number(const Json& object, const std::string& path, const char* key, double min,
                        double max, std::optional<double> fallback) const;
  Result<std::string> string(const Json& object, const std::string& path, const char* key,
                             std::optional<std::string> fallback) const;
  Result<bool> boolean(const Json& object, const std::string& path, const char* key,
                       std::optional<bool> fallback) const;

 private:
  std::string file_;
};

namespace json_fields_detail {

inline std::string format_number(double v) {
  std::string s = std::to_string(v);
  // to_string gives six decimals; trim the zeros for messages.
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace json_fields_detail

inline Status JsonFields::only(const Json& object, const std::string& path,
                        std::initializer_list<const char*> allowed) const {
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool known = false;
    for (const char* name : allowed) known = known || it.key() == name;
    if (known) continue;
    std::string list;
    for (const char* name : allowed) list += (list.empty() ? "" : ", ") + std::string(name);
    return error(join(path, it.key()), "unknown field (expected one of: " + list + ")");
  }
  return {};
}

inline Result<int64_t> JsonFields::integer(const Json& object, const std::string& path, const char* key,
                                    int64_t min, int64_t max,
                                    std::optional<int64_t> fallback) const {
  const std::string where = join(path, key);
  const auto it = object.find(key);
  if (it == object.end()) {
    if (fallback) return *fallback;
    return error(where, "missing (an integer is required)");
  }
  if (!it->is_number_integer()) return error(where, "must be an integer, got " + it->dump());
  int64_t value = 0;
  if (it->is_number_unsigned()) {
    const uint64_t u = it->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return error(where, it->dump() + " is out of range " + std::to_string(min) + ".." + std::to_string(max));
    }
    value = static_cast<int64_t>(u);
  } else {
    value = it->get<int64_t>();
  }
  if (value < min || value > max) {
    return error(where, std::to_string(value) + " is out of range " + std::to_string(min) + ".." +
                            std::to_string(max));
  }
  return value;
}

inline Result<double> JsonFields::number(const Json& object, const std::string& path, const char* key,
                                  double min, double max, std::optional<double> fallback) const {
  const std::string where = join(path, key);
  const auto it = object.find(key);
  if (it == object.end()) {
    if (fallback) return *fallback;
    return error(where, "missing (a number is required)");
  }
  if (!it->is_number()) return error(where, "must be a number, got " + it->dump());
  const double value = it->get<double>();
  if (!std::isfinite(value) || value < min || value > max) {
    return error(where, it->dump() + " is out of range " + json_fields_detail::format_number(min) + ".." + json_fields_detail::format_number(max));
  }
  return value;
}

inline Result<std::string> JsonFields::string(const Json& object, const std::string& path,
                                       const char* key,
                                       std::optional<std::string> fallback) const {
  const std::string where = join(path, key);
  const auto it = object.find(key);
  if (it == object.end()) {
    if (fallback) return *fallback;
    return error(where, "missing (a string is required)");
  }
  if (!it->is_string()) return error(where, "must be a string, got " + it->dump());
  return it->get<std::string>();
}

inline Result<bool> JsonFields::boolean(const Json& object, const std::string& path, const char* key,
                                 std::optional<bool> fallback) const {
  const std::string where = join(path, key);
  const auto it = object.find(key);
  if (it == object.end()) {
    if (fallback) return *fallback;
    return error(where, "missing (true or false is required)");
  }
  if (!it->is_boolean()) return error(where, "must be true or false, got " + it->dump());
  return it->get<bool>();
}

}  // namespace posecast::sim
