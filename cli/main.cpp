// posecast: one binary, subcommands on the shared command-line style (CLI11). Each subcommand
// is declared and implemented in its own cmd_*.cpp file; `posecast <command> --help` prints
// that command's usage.

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "command_line.h"
#include "commands.h"

namespace posecast::cli {

void add_threads_option(CLI::App& command, unsigned& threads) {
  command.add_option("--threads", threads, "evaluation threads; results do not depend on it")
      ->type_name("N")
      ->check(integer_in(1, 256));
}

}  // namespace posecast::cli

int main(int argc, char** argv) {
  using namespace posecast::cli;
  CommandLine command_line("posecast", "Model, scenario and recording tools of posecast (README.md, \"Programs\").");
  command_line.app().require_subcommand(1);
  const std::vector<Command> commands = {
      add_info_command(command_line),    add_eval_command(command_line),   add_gen_rig_command(command_line),
      add_run_command(command_line),     add_replay_command(command_line), add_regress_command(command_line),
  };
  const std::vector<std::string> args(argv + 1, argv + argc);
  // CLI11 would call a word that names no command a missing command; say what it is.
  if (!args.empty() && args[0].rfind('-', 0) != 0) {
    std::string names;
    bool known = false;
    for (const Command& c : commands) {
      known = known || c.app->get_name() == args[0];
      names += (names.empty() ? "" : ", ") + c.app->get_name();
    }
    if (!known) return print_usage_error("posecast", "unknown command '" + args[0] + "' (commands: " + names + ")");
  }
  const CommandLine::Outcome outcome = command_line.parse(args);
  if (outcome != CommandLine::Outcome::kRun) return CommandLine::exit_code(outcome);
  for (const Command& c : commands) {
    if (!c.app->parsed()) continue;
    try {
      return c.run();
    } catch (const std::exception& e) {
      // Commands report errors as values; this catches only what escapes (e.g. bad_alloc).
      std::fprintf(stderr, "posecast %s: %s\n", c.app->get_name().c_str(), e.what());
      return kExitFailure;
    }
  }
  return kExitUsage;  // not reached: require_subcommand(1) makes parse() fail without one
}
