#pragma once
// A small command-line parser for posecast's subcommands: positional arguments, `--name value`
// options and `--name` switches, declared up front so unknown options are errors.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "posecast/result.h"

namespace posecast::cli {

struct ArgSpec {
  std::set<std::string> options;   // take a value: --time 0.5
  std::set<std::string> switches;  // take none: --json
};

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;
  std::set<std::string> switches;

  bool has(const std::string& name) const { return switches.count(name) != 0; }
  std::optional<std::string> get(const std::string& name) const;
};

// Parses argv[first..argc). Errors: an unknown --option, an option without its value.
// "--help"/"-h" is always accepted as the switch "help".
Result<Args> parse_args(int argc, char** argv, int first, const ArgSpec& spec);

// Strict number parsing for option values; the error names the option.
Result<double> parse_double(const std::string& option, const std::string& text);
Result<long long> parse_integer(const std::string& option, const std::string& text, long long min,
                                long long max);

// The value of option `--name` parsed as parse_integer does, or `fallback` when the option is
// absent. `fallback` need not lie in min..max (a caller may use it to mean "not given").
Result<long long> integer_option(const Args& args, const std::string& name, long long min,
                                 long long max, long long fallback);

// `--threads N` (1..256, default 1): the evaluation threads of run, replay and regress.
Result<unsigned> threads_option(const Args& args);

}  // namespace posecast::cli
