#include "soak_options.h"

#include <charconv>
#include <cstdlib>

namespace posecast::soak {
namespace {

Result<double> number(const std::string& flag, const std::string& text, double lo, double hi) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(v >= lo && v <= hi)) {
    return Error{flag + ": '" + text + "' is not a number in " + std::to_string(lo) + ".." +
                 std::to_string(hi)};
  }
  return v;
}

Result<uint64_t> integer(const std::string& flag, const std::string& text, uint64_t lo, uint64_t hi) {
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) {
    return Error{flag + ": '" + text + "' is not an integer in " + std::to_string(lo) + ".." +
                 std::to_string(hi)};
  }
  return v;
}

}  // namespace

const char* soak_usage() {
  return "usage: posecast-soak [--clients N] [--duration S] [--loss P] [--latency MS] [--jitter MS]\n"
         "                     [--reorder P] [--seed X] [--entities E] [--model SOURCE]\n"
         "                     [--send-rate HZ] [--tick-rate HZ] [--frame-ms MS] [--no-churn] [--json]\n"
         "Runs an in-process server and N churning clients on 127.0.0.1 for S simulated seconds\n"
         "and checks every palette the clients decode against the server's. Exit 0: no invariant\n"
         "violated; 1: a violation (listed); 2: bad arguments or setup failure.\n"
         "Same seed, same churn: when clients join, leave and vanish follows from the seed alone.\n"
         "The sockets are real, though: a datagram the kernel delivers a read later than\n"
         "usual (a busy machine) shifts timing-dependent counts (palettes compared, bytes, delay)\n"
         "slightly between runs; the invariants hold either way.\n";
}

Result<SoakOptions> parse_soak_options(std::span<const std::string> args) {
  SoakOptions o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--help" || flag == "-h") {
      o.help = true;
      continue;
    }
    if (flag == "--no-churn") {
      o.churn = false;
      continue;
    }
    if (flag == "--json") {
      o.json = true;
      continue;
    }
    if (i + 1 >= args.size()) return Error{flag + ": missing value (or unknown flag)"};
    const std::string& value = args[++i];
    auto take_double = [&](double& out, double lo, double hi) -> Status {
      Result<double> v = number(flag, value, lo, hi);
      if (!v) return v.error();
      out = v.value();
      return {};
    };
    auto take_int = [&](auto& out, uint64_t lo, uint64_t hi) -> Status {
      Result<uint64_t> v = integer(flag, value, lo, hi);
      if (!v) return v.error();
      out = static_cast<std::remove_reference_t<decltype(out)>>(v.value());
      return {};
    };
    Status s;
    if (flag == "--clients") s = take_int(o.clients, 1, 1000);
    else if (flag == "--duration") s = take_double(o.duration_s, 0.1, 86400);
    else if (flag == "--loss") s = take_double(o.loss_percent, 0, 100);
    else if (flag == "--latency") s = take_double(o.latency_ms, 0, 10000);
    else if (flag == "--jitter") s = take_double(o.jitter_ms, 0, 10000);
    else if (flag == "--reorder") s = take_double(o.reorder_percent, 0, 100);
    else if (flag == "--seed") s = take_int(o.seed, 0, UINT64_MAX);
    else if (flag == "--entities") s = take_int(o.entities, 0, 100000);
    else if (flag == "--model") o.model = value;
    else if (flag == "--send-rate") s = take_int(o.send_rate_hz, 1, 1000);
    else if (flag == "--tick-rate") s = take_int(o.tick_rate_hz, 1, 1000);
    else if (flag == "--frame-ms") s = take_double(o.frame_ms, 0.1, 1000);
    else return Error{flag + ": unknown flag"};
    if (!s) return s.error();
  }
  if (o.reorder_percent < 0) o.reorder_percent = (o.latency_ms > 0 || o.jitter_ms > 0) ? 5.0 : 0.0;
  if (o.send_rate_hz > o.tick_rate_hz) return Error{"--send-rate: above the tick rate"};
  return o;
}

}  // namespace posecast::soak
