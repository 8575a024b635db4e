#pragma once
// Internal: typed, path-naming access to JSON fields for the scenario parser. Every getter
// returns a value or an Error "FILE: PATH: reason"; none throws.

#include <nlohmann/json.hpp>

#include <cstdint>
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

}  // namespace posecast::sim
