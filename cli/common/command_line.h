#pragma once
// The one command-line style of posecast's programs, on CLI11: the same --help layout (usage,
// description, options, footer), the same error wording
// ("posecast-soak: --clients: 0 is not in 1..1000", then "Run with --help for more
// information.") and exit code 2 for a bad command line.
//
// Use: build a CommandLine, add options to app() with the range validators below, then
// parse(); on kHelp or kUsageError the text is already printed and the program returns
// exit_code(). Not thread-safe (as CLI11's App).

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

  // Parses `args` (without the program name). kHelp: the help went to stdout; kUsageError:
  // one line "program: reason" and a pointer to --help went to stderr.
  Outcome parse(const std::vector<std::string>& args);
  // The exit code for `outcome`: 0 for help, 2 for a usage error.
  static int exit_code(Outcome outcome) { return outcome == Outcome::kUsageError ? kExitUsage : 0; }
  // The last usage error, without the program name ("--clients: 0 is not in 1..1000").
  const std::string& error() const { return error_; }

 private:
  std::string program_;
  CLI::App app_;
  std::string error_;
};

// Validators whose failures read "<value> is not in LO..HI" (CLI11 puts the option's name in
// front). The text must be a whole number (integer_in) or a finite number (number_in).
CLI::Validator integer_in(uint64_t lo, uint64_t hi);
CLI::Validator number_in(double lo, double hi);

}  // namespace posecast::cli
