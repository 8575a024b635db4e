// posecast gen-rig --joints N --out FILE.glb

#include <cstdio>
#include <fstream>

#include "args.h"
#include "commands.h"
#include "posecast/rig/rig_generator.h"

namespace posecast::cli {

namespace {
constexpr const char kUsage[] =
    "usage: posecast gen-rig --joints N --out FILE.glb\n"
    "  Writes the project's generated skinned rig with exactly N joints (2..512) and the clips\n"
    "  idle, walk, run, wave, step_pose (STEP) and sway_cubic (CUBICSPLINE). Same N, same bytes.\n";

int fail(const std::string& why, int code) {
  std::fprintf(stderr, "posecast gen-rig: %s\n", why.c_str());
  return code;
}
}  // namespace

int gen_rig_command(int argc, char** argv) {
  Result<Args> args = parse_args(argc, argv, 2, ArgSpec{{"joints", "out"}, {}});
  if (!args) return fail(args.error().message, kExitUsage);
  if (args->has("help")) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (!args->positional.empty()) return fail("unexpected argument '" + args->positional[0] + "'", kExitUsage);
  const auto joints_text = args->get("joints");
  const auto out = args->get("out");
  if (!joints_text || !out) return fail("--joints and --out are required (see --help)", kExitUsage);
  Result<long long> joints = parse_integer("joints", *joints_text, rig::kMinJoints, rig::kMaxJoints);
  if (!joints) return fail(joints.error().message, kExitUsage);

  Result<std::vector<uint8_t>> glb = rig::generate_rig_glb(rig::RigOptions{static_cast<uint32_t>(joints.value())});
  if (!glb) return fail(glb.error().message, kExitFailure);
  // Write to a temporary name and rename, so a failed write never leaves a partial model behind.
  const std::string temp = *out + ".partial";
  {
    std::ofstream file(temp, std::ios::binary | std::ios::trunc);
    if (!file) return fail(*out + ": cannot open for writing", kExitFailure);
    file.write(reinterpret_cast<const char*>(glb->data()), static_cast<std::streamsize>(glb->size()));
    if (!file) return fail(*out + ": write failed", kExitFailure);
  }
  if (std::rename(temp.c_str(), out->c_str()) != 0) {
    std::remove(temp.c_str());
    return fail(*out + ": cannot rename the written file into place", kExitFailure);
  }
  std::printf("wrote %s: %lld joints, %zu bytes\n", out->c_str(), joints.value(), glb->size());
  return kExitOk;
}

}  // namespace posecast::cli
