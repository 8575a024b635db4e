#include "posecast/rig/model_source.h"

#include <charconv>
#include <system_error>

#include "posecast/rig/rig_generator.h"

namespace posecast::rig {

namespace {
constexpr const char kPrefix[] = "gen-rig:";
constexpr std::size_t kPrefixLength = sizeof(kPrefix) - 1;
constexpr const char kTravelSuffix[] = ":travel";
constexpr std::size_t kTravelSuffixLength = sizeof(kTravelSuffix) - 1;
}  // namespace

bool is_generated_rig_source(const std::string& source) {
  return source.compare(0, kPrefixLength, kPrefix) == 0;
}

Result<Model> load_model_source(const std::string& source, const ImportOptions& options) {
  if (!is_generated_rig_source(source)) return import_gltf_file(source, options);
  std::string count = source.substr(kPrefixLength);
  const bool travelling = count.size() > kTravelSuffixLength &&
                          count.compare(count.size() - kTravelSuffixLength, kTravelSuffixLength, kTravelSuffix) == 0;
  if (travelling) count.resize(count.size() - kTravelSuffixLength);
  uint32_t joints = 0;
  const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), joints);
  if (ec != std::errc() || end != count.data() + count.size() || joints < kMinJoints ||
      joints > kMaxJoints) {
    return Error{"'" + source + "': expected gen-rig:N or gen-rig:N:travel with N an integer in " +
                 std::to_string(kMinJoints) + ".." + std::to_string(kMaxJoints)};
  }
  Result<std::vector<uint8_t>> glb = generate_rig_glb(RigOptions{joints, travelling});
  if (!glb) return glb.error();
  return import_gltf_memory(glb.value(), source, options);
}

std::string locate_model_source(const std::string& source, const std::filesystem::path& base_dir,
                                const std::string& search_dir) {
  namespace fs = std::filesystem;
  if (is_generated_rig_source(source)) return source;
  const fs::path recorded(source);
  std::error_code ec;  // an unreadable folder counts as "no file there"
  if (!search_dir.empty()) {
    const fs::path candidate = fs::path(search_dir) / recorded.filename();
    if (fs::exists(candidate, ec)) return candidate.string();
  }
  if (recorded.is_absolute()) return source;
  const fs::path beside = (base_dir / recorded).lexically_normal();
  if (fs::exists(beside, ec)) return beside.string();
  return source;
}

}  // namespace posecast::rig
