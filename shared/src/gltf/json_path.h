#pragma once
// Internal to the importer: how a message names one entry of a glTF JSON array. Used by the
// JSON prepass (nlohmann) and the builders (tinygltf), so both word paths the same way.

#include <cstddef>
#include <string>
#include <string_view>

namespace posecast::gltf {

// "name[index]", the JSON path element of one array entry.
inline std::string at(std::string_view name, std::size_t index) {
  std::string s(name);
  s += '[';
  s += std::to_string(index);
  s += ']';
  return s;
}

}  // namespace posecast::gltf
