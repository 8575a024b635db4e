#include "args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace posecast::cli {

std::optional<std::string> Args::get(const std::string& name) const {
  auto it = options.find(name);
  if (it == options.end()) return std::nullopt;
  return it->second;
}

Result<Args> parse_args(int argc, char** argv, int first, const ArgSpec& spec) {
  Args args;
  for (int i = first; i < argc; ++i) {
    std::string word = argv[i];
    if (word == "-h" || word == "--help") {
      args.switches.insert("help");
      continue;
    }
    if (word.size() > 2 && word.compare(0, 2, "--") == 0) {
      std::string name = word.substr(2);
      std::optional<std::string> inline_value;
      if (auto eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      if (spec.switches.count(name) && !inline_value) {
        args.switches.insert(name);
      } else if (spec.options.count(name)) {
        if (inline_value) {
          args.options[name] = *inline_value;
        } else if (i + 1 < argc) {
          args.options[name] = argv[++i];
        } else {
          return Error{"option --" + name + " needs a value"};
        }
      } else {
        return Error{"unknown option --" + name};
      }
      continue;
    }
    args.positional.push_back(word);
  }
  return args;
}

Result<double> parse_double(const std::string& option, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE ||
      !std::isfinite(value)) {
    return Error{"--" + option + ": '" + text + "' is not a finite number"};
  }
  return value;
}

Result<long long> parse_integer(const std::string& option, const std::string& text, long long min,
                                long long max) {
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE) {
    return Error{"--" + option + ": '" + text + "' is not an integer"};
  }
  if (value < min || value > max) {
    return Error{"--" + option + ": " + text + " is outside " + std::to_string(min) + ".." +
                 std::to_string(max)};
  }
  return value;
}

Result<long long> integer_option(const Args& args, const std::string& name, long long min,
                                 long long max, long long fallback) {
  const std::optional<std::string> text = args.get(name);
  if (!text) return fallback;
  return parse_integer(name, *text, min, max);
}

Result<unsigned> threads_option(const Args& args) {
  Result<long long> n = integer_option(args, "threads", 1, 256, 1);
  if (!n) return n.error();
  return static_cast<unsigned>(n.value());
}

}  // namespace posecast::cli
