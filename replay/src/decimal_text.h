#pragma once
// Internal to replay/: the one way reports and error messages print a tick, an entity id, a
// count or a line number (decimal, unsigned).

#include <cstdint>
#include <string>

namespace posecast::replay {

inline std::string num(uint64_t v) { return std::to_string(v); }

}  // namespace posecast::replay
