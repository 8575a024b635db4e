#include "command_line.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
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

}  // namespace

CommandLine::CommandLine(std::string program, std::string description)
    : program_(std::move(program)), app_(std::move(description), program_) {
  app_.footer("Exit codes: 0 success, 1 the work failed, 2 bad command line.");
  app_.get_formatter()->column_width(30);
  app_.option_defaults()->always_capture_default();
}

CommandLine::Outcome CommandLine::parse(const std::vector<std::string>& args) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  try {
    app_.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::cout << app_.help();
    return Outcome::kHelp;
  } catch (const CLI::ParseError& e) {
    error_ = e.what();
    std::fprintf(stderr, "%s: %s\nRun with --help for more information.\n", program_.c_str(), error_.c_str());
    return Outcome::kUsageError;
  }
  return Outcome::kRun;
}

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
  const std::string range = short_number(lo) + ".." + short_number(hi);
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
