#pragma once
// PrometheusText: writes the Prometheus text exposition format (version 0.0.4): per metric
// family one "# HELP" and one "# TYPE" line, then its samples `name{label="value",...} value`,
// lines ended by '\n'. Help text escapes '\\' and newlines; label values escape '\\', '"' and
// newlines. A histogram is written whole: cumulative `_bucket{le="..."}` samples in increasing
// order ending with le="+Inf" (equal to `_count`), then `_sum` and `_count`.
// The caller keeps a family's samples together and passes valid names (checked in debug builds).

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace posecast::server::fleet {

// The Content-Type of what PrometheusText writes.
inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

using Labels = std::initializer_list<std::pair<std::string_view, std::string_view>>;

class PrometheusText {
 public:
  enum class Type { kCounter, kGauge, kHistogram };

  // Starts the family `name` ([a-zA-Z_:][a-zA-Z0-9_:]*): its HELP and TYPE lines.
  void family(std::string_view name, Type type, std::string_view help);
  // One sample of the current family (a counter's name ends in _total by convention).
  void sample(std::string_view name, Labels labels, uint64_t value);
  void sample(std::string_view name, Labels labels, double value);
  // A whole histogram sample set of the family `name`: `counts` per bucket, not cumulative,
  // one more than `upper_bounds` (the last is the +Inf bucket); `sum` of the observations.
  void histogram(std::string_view name, Labels labels, std::span<const double> upper_bounds,
                 std::span<const uint64_t> counts, double sum);

  const std::string& text() const { return out_; }

 private:
  void begin_sample(std::string_view name, Labels labels, std::string_view extra_name = {},
                    std::string_view extra_value = {});
  std::string out_;
};

// The text of a sample value: "+Inf", "-Inf", "NaN", else the shortest decimal that reads back
// as the same double (plain digits for magnitudes in 1e-9..1e15, an exponent beyond).
std::string format_sample_value(double value);

}  // namespace posecast::server::fleet
