// posecast gen-rig --joints N --out FILE.glb

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "commands.h"
#include "posecast/rig/rig_generator.h"

namespace posecast::cli {

namespace {
struct GenRigOptions {
  uint32_t joints = 0;
  std::string out;
};

int fail(const std::string& why, int code) {
  std::fprintf(stderr, "posecast gen-rig: %s\n", why.c_str());
  return code;
}

int gen_rig(const GenRigOptions& o) {
  const std::string* out = &o.out;
  Result<std::vector<uint8_t>> glb = rig::generate_rig_glb(rig::RigOptions{o.joints});
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
  std::printf("wrote %s: %u joints, %zu bytes\n", out->c_str(), o.joints, glb->size());
  return kExitOk;
}

}  // namespace

Command add_gen_rig_command(CommandLine& command_line) {
  CLI::App* app = command_line.add_command(
      "gen-rig", "write the generated rig (N joints) as a .glb",
      "Writes the project's generated skinned rig with exactly N joints and the clips idle,\n"
                 "walk, run, wave, step_pose (STEP) and sway_cubic (CUBICSPLINE). Same N, same bytes.");
  auto o = std::make_shared<GenRigOptions>();
  app->add_option("--joints", o->joints, "joints in the rig")
      ->type_name("N")
      ->required()
      ->check(integer_in(rig::kMinJoints, rig::kMaxJoints));
  app->add_option("--out", o->out, "the .glb file to write")->type_name("FILE.glb")->required();
  return {app, [o] { return gen_rig(*o); }};
}

}  // namespace posecast::cli
