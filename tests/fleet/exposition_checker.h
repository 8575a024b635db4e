#pragma once
// A strict checker of the Prometheus text exposition format (version 0.0.4), written for the
// tests independently of the server's writer: every line must be a valid HELP, TYPE or sample
// line ending in '\n'; names, label names, escapes and values must be valid; each family has
// at most one HELP and one TYPE, before its samples, and its samples are contiguous; every
// sample belongs to a declared family (a histogram's to _bucket, _sum, _count); no series twice;
// counters are >= 0 and named *_total; a histogram's buckets rise in le, are cumulative, end
// with le="+Inf" equal to its _count, and have a _sum.

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace posecast::test {

struct Exposition {
  std::vector<std::string> errors;           // empty: valid ("line 12: ...")
  std::map<std::string, double> series;      // "name{a=\"x\",b=\"y\"}" (labels sorted) -> value
  std::map<std::string, std::string> types;  // family -> type

  // The value of `name` with exactly `labels` ("" for none; e.g. R"(kind="ack")"), or -1 when absent.
  double value(const std::string& name, const std::string& labels = "") const;
  // The sum over every series of `name` (any labels); 0 when none.
  double sum(const std::string& name) const;
};

Exposition check_exposition(std::string_view text);

}  // namespace posecast::test
