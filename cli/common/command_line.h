#pragma once
// The one command-line style of posecast's programs, on CLI11: the same --help layout (usage,
// description, options, footer), the same error wording
// ("posecast-soak: --clients: 0 is not in 1..1000", then "Run with --help for more
// information.") and exit code 2 for a bad command line.
//
// Use: build a CommandLine, add options to app() (or to subcommands made with add_command())
// with the range validators below, then parse(); on kHelp or kUsageError the text is already
// printed and the program returns exit_code(). A program that checks more after parsing
// reports with print_usage_error(). Later occurrences of an option win over earlier ones.
// Not thread-safe (as CLI11's App).

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace posecast::cli {

inline constexpr int kExitUsage = 2;

class CommandLine {
 public:
  enum class Outcome { kRun, kHelp, kUsageError };

  // `program`: the name in usage and error lines; `description`: the paragraph under usage.
  CommandLine(std::string program, std::string description);

  CLI::App& app() { return app_; }
  const std::string& program() const { return program_; }

  // A subcommand of app() in the same style (`posecast info`); its errors name
  // "program name". `summary`: one line, in the program's list of commands and atop the
  // command's help; `details`: paragraphs at the end of the command's help. Owned by app().
  CLI::App* add_command(const std::string& name, const std::string& summary, const std::string& details = "");

  // Parses `args` (without the program name). kHelp: the help (of the subcommand given, if
  // any) went to stdout; kUsageError: one line "program: reason" and a pointer to --help went
  // to stderr.
  Outcome parse(const std::vector<std::string>& args);
  // As parse(), printing nothing: kHelp leaves the text in help(), kUsageError the reason in
  // error(). For parsers that return their result to a caller (and tests).
  Outcome parse_quietly(const std::vector<std::string>& args);
  // The exit code for `outcome`: 0 for help, 2 for a usage error.
  static int exit_code(Outcome outcome) { return outcome == Outcome::kUsageError ? kExitUsage : 0; }
  // The last usage error, without the program name ("--clients: 0 is not in 1..1000").
  const std::string& error() const { return error_; }
  // The name errors are prefixed with: the program, and the subcommand given ("posecast eval").
  const std::string& error_prefix() const { return error_prefix_; }
  // The --help text (of the subcommand given, if any).
  std::string help() { return app_.help(); }

 private:
  std::string program_;
  CLI::App app_;
  std::string error_;
  std::string error_prefix_;
};

// Prints a usage error in the common style ("program: reason", then the pointer to --help) on
// stderr and returns kExitUsage. For what a program checks after parsing.
int print_usage_error(const std::string& program, const std::string& reason);

// Validators whose failures read "<value> is not in LO..HI" (CLI11 puts the option's name in
// front). The text must be a whole number (integer_in) or a finite number (number_in).
CLI::Validator integer_in(uint64_t lo, uint64_t hi);
CLI::Validator number_in(double lo, double hi);
// "LO..HI" as the validators and the programs' own range checks write it ("0.1..3600").
std::string range_text(double lo, double hi);

}  // namespace posecast::cli
