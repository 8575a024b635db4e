#include "command_line.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>
#include <utility>

namespace posecast::cli {
namespace {

// "0.1" rather than std::to_string's "0.100000".
std::string short_number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// CLI11's layout, but for a flag's implied value ("--agones{on}"): that is said in its help
// and its value name ("--agones [=on|off]"), not in its name.
class Formatter : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* option, bool positional) const override {
    std::string name = CLI::Formatter::make_option_name(option, positional);
    for (std::size_t open = name.find('{'); open != std::string::npos; open = name.find('{', open)) {
      const std::size_t close = name.find('}', open);
      if (close == std::string::npos) break;
      name.erase(open, close + 1 - open);
    }
    return name;
  }
};

constexpr const char kExitCodes[] = "Exit codes: 0 success, 1 the work failed, 2 bad command line.";

}  // namespace

CommandLine::CommandLine(std::string program, std::string description)
    : program_(std::move(program)), app_(std::move(description), program_), error_prefix_(program_) {
  app_.footer(kExitCodes);
  auto formatter = std::make_shared<Formatter>();
  formatter->column_width(30);
  app_.formatter(formatter);
  app_.option_defaults()->always_capture_default();
  // As the programs always did: an option given twice takes its last value.
  app_.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

CLI::App* CommandLine::add_command(const std::string& name, const std::string& summary, const std::string& details) {
  CLI::App* command = app_.add_subcommand(name, summary);
  command->footer(details.empty() ? std::string(kExitCodes) : details + "\n" + kExitCodes);
  return command;
}

CommandLine::Outcome CommandLine::parse_quietly(const std::vector<std::string>& args) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  error_.clear();
  error_prefix_ = program_;
  try {
    app_.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    return Outcome::kHelp;
  } catch (const CLI::ParseError& e) {
    error_ = e.what();
    // The subcommand being parsed when the error came (CLI11 lists it once it is recognised).
    if (const std::vector<CLI::App*> given = app_.get_subcommands(); !given.empty()) {
      error_prefix_ += " " + given.back()->get_name();
    }
    return Outcome::kUsageError;
  }
  return Outcome::kRun;
}

CommandLine::Outcome CommandLine::parse(const std::vector<std::string>& args) {
  const Outcome outcome = parse_quietly(args);
  if (outcome == Outcome::kHelp) std::cout << app_.help();
  if (outcome == Outcome::kUsageError) print_usage_error(error_prefix_, error_);
  return outcome;
}

int print_usage_error(const std::string& program, const std::string& reason) {
  std::fprintf(stderr, "%s: %s\nRun with --help for more information.\n", program.c_str(), reason.c_str());
  return kExitUsage;
}

std::string range_text(double lo, double hi) { return short_number(lo) + ".." + short_number(hi); }

CLI::Validator integer_in(uint64_t lo, uint64_t hi) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        uint64_t v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) {
          return text + " is not in " + range;
        }
        return {};
      },
      range);
}

CLI::Validator number_in(double lo, double hi) {
  const std::string range = range_text(lo, hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v < lo || v > hi) {
          return text + " is not in " + range;
        }
        return {};
      },
      range);
}

}  // namespace posecast::cli
