#pragma once
// The `posecast` subcommands. Each takes the whole argv (argv[1] is its own name), prints its
// own --help, writes results to stdout, and on failure prints one line "posecast <cmd>: <why>"
// to stderr and returns a non-zero exit code (see docs/cli.md for the codes).

namespace posecast::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // the work failed (bad file, divergence, ...)
inline constexpr int kExitUsage = 2;     // bad command line

int info_command(int argc, char** argv);
int eval_command(int argc, char** argv);
int gen_rig_command(int argc, char** argv);
int run_command(int argc, char** argv);  // cmd_run.cpp
int replay_command(int argc, char** argv);   // cmd_replay.cpp
int regress_command(int argc, char** argv);  // cmd_regress.cpp

}  // namespace posecast::cli
