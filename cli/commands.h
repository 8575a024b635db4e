#pragma once
// The `posecast` subcommands on the shared command-line style (cli/common/command_line.h).
// Each add_*_command() declares its subcommand, options and --help on `command_line` and
// returns what runs it once parsing has chosen it. A run writes results to stdout and on
// failure prints one line "posecast <cmd>: <why>" to stderr and returns a non-zero exit code
// (the codes below; README.md, "Programs").

#include <functional>
#include <string>

#include "command_line.h"
#include "posecast/sim/world.h"

namespace posecast::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // the work failed (bad file, divergence, ...)
// kExitUsage (2, bad command line): command_line.h.

struct Command {
  CLI::App* app = nullptr;    // the subcommand, owned by the CommandLine
  std::function<int()> run;   // valid once the command line has been parsed
};

Command add_info_command(CommandLine& command_line);     // cmd_info.cpp
Command add_eval_command(CommandLine& command_line);     // cmd_eval.cpp
Command add_gen_rig_command(CommandLine& command_line);  // cmd_gen_rig.cpp
Command add_run_command(CommandLine& command_line);      // cmd_run.cpp
Command add_replay_command(CommandLine& command_line);   // cmd_replay.cpp
Command add_regress_command(CommandLine& command_line);  // cmd_regress.cpp

// `--threads N` (1..256, default 1): the evaluation threads of run, replay and regress.
void add_threads_option(CLI::App& command, unsigned& threads);

// One animation event as `run --events` and `replay --events` print it (docs/events.md):
// "event tick 12 entity 3 clip walk marker footstep_r layer 0 weight 1.000" (cmd_run.cpp).
std::string event_line(const sim::World& world, const sim::AnimationEvent& event);

}  // namespace posecast::cli
