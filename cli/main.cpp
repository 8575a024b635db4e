// posecast: one binary, subcommands. Each entry of the table below is implemented in its own
// cmd_*.cpp file; `posecast <command> --help` prints that command's usage.

#include <cstdio>
#include <cstring>
#include <exception>

#include "commands.h"

namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);
};

constexpr Command kCommands[] = {
    {"info", "print a model's skins, joint tree, clips and meshes",
     posecast::cli::info_command},
    {"eval", "evaluate a clip at a time: local TRS and palette per joint (text or --json)",
     posecast::cli::eval_command},
    {"gen-rig", "write the generated rig (N joints) as a .glb", posecast::cli::gen_rig_command},
    {"run", "run a scenario headless: per-tick palette hashes, final world hash",
     posecast::cli::run_command},
    {"replay", "re-simulate a recording bit-exactly: --verify, seek (--from/--to), --speed",
     posecast::cli::replay_command},
    {"regress", "run a folder of scenarios against their golden per-tick hashes",
     posecast::cli::regress_command},
};

void print_usage(std::FILE* out) {
  std::fprintf(out, "usage: posecast <command> [options]   (posecast <command> --help)\n\ncommands:\n");
  for (const Command& c : kCommands) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return posecast::cli::kExitUsage;
  }
  if (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    print_usage(stdout);
    return posecast::cli::kExitOk;
  }
  for (const Command& c : kCommands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    try {
      return c.run(argc, argv);
    } catch (const std::exception& e) {
      // Commands report errors as values; this catches only what escapes (e.g. bad_alloc).
      std::fprintf(stderr, "posecast %s: %s\n", c.name, e.what());
      return posecast::cli::kExitFailure;
    }
  }
  std::fprintf(stderr, "posecast: unknown command '%s'\n", argv[1]);
  print_usage(stderr);
  return posecast::cli::kExitUsage;
}
