#include "prometheus_text.h"

#include <cassert>
#include <charconv>
#include <cmath>

namespace posecast::server::fleet {
namespace {

[[maybe_unused]] bool is_name(std::string_view name, bool colons) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colons && c == ':');
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

void append_escaped(std::string& out, std::string_view text, bool quotes) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quotes && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

const char* type_name(PrometheusText::Type type) {
  switch (type) {
    case PrometheusText::Type::kCounter: return "counter";
    case PrometheusText::Type::kGauge: return "gauge";
    case PrometheusText::Type::kHistogram: return "histogram";
  }
  return "untyped";
}

}  // namespace

std::string format_sample_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[400];
  // Plain decimals in the usual range ("0.0005", not "5e-04"), exponents beyond it.
  const double magnitude = std::fabs(value);
  const bool plain = magnitude == 0 || (magnitude >= 1e-9 && magnitude < 1e15);
  const auto [end, ec] = plain ? std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed)
                               : std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : "NaN";
}

void PrometheusText::family(std::string_view name, Type type, std::string_view help) {
  assert(is_name(name, true));
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  append_escaped(out_, help, false);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type_name(type);
  out_ += '\n';
}

void PrometheusText::begin_sample(std::string_view name, Labels labels, std::string_view extra_name,
                                  std::string_view extra_value) {
  assert(is_name(name, true));
  out_ += name;
  if (labels.size() > 0 || !extra_name.empty()) {
    out_ += '{';
    bool first = true;
    auto label = [&](std::string_view key, std::string_view value) {
      assert(is_name(key, false));
      if (!first) out_ += ',';
      first = false;
      out_ += key;
      out_ += "=\"";
      append_escaped(out_, value, true);
      out_ += '"';
    };
    for (const auto& [key, value] : labels) label(key, value);
    if (!extra_name.empty()) label(extra_name, extra_value);
    out_ += '}';
  }
  out_ += ' ';
}

void PrometheusText::sample(std::string_view name, Labels labels, uint64_t value) {
  begin_sample(name, labels);
  out_ += std::to_string(value);
  out_ += '\n';
}

void PrometheusText::sample(std::string_view name, Labels labels, double value) {
  begin_sample(name, labels);
  out_ += format_sample_value(value);
  out_ += '\n';
}

void PrometheusText::histogram(std::string_view name, Labels labels, std::span<const double> upper_bounds,
                               std::span<const uint64_t> counts, double sum) {
  assert(counts.size() == upper_bounds.size() + 1);
  const std::string bucket = std::string(name) + "_bucket";
  uint64_t cumulative = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    cumulative += counts[i];
    begin_sample(bucket, labels, "le", i < upper_bounds.size() ? format_sample_value(upper_bounds[i]) : "+Inf");
    out_ += std::to_string(cumulative);
    out_ += '\n';
  }
  sample(std::string(name) + "_sum", labels, sum);
  sample(std::string(name) + "_count", labels, cumulative);
}

}  // namespace posecast::server::fleet
