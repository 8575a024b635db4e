#include "exposition_checker.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

namespace posecast::test {
namespace {

bool name_char(char c, bool first, bool colon) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':')) return true;
  return !first && c >= '0' && c <= '9';
}

// Reads a metric (colon = true) or label name at `pos`; empty when none.
std::string read_name(std::string_view line, std::size_t& pos, bool colon) {
  const std::size_t start = pos;
  while (pos < line.size() && name_char(line[pos], pos == start, colon)) ++pos;
  return std::string(line.substr(start, pos - start));
}

// A float as Go's strconv.ParseFloat takes it (Prometheus' parser): decimal or exponent
// notation, or +Inf, -Inf, Inf, NaN.
bool parse_value(std::string_view text, double& out) {
  if (text == "+Inf" || text == "Inf") return out = INFINITY, true;
  if (text == "-Inf") return out = -INFINITY, true;
  if (text == "NaN") return out = NAN, true;
  if (text.empty() || text.find_first_not_of("0123456789+-.eE") != std::string_view::npos) return false;
  const std::string copy(text);
  char* end = nullptr;
  out = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size();
}

struct Family {
  std::string type;
  bool help = false;
  bool samples_done = false;  // another family's sample came after ours
};

class Checker {
 public:
  Exposition run(std::string_view text);

 private:
  void fail(const std::string& why) { out_.errors.push_back("line " + std::to_string(line_no_) + ": " + why); }
  void comment(std::string_view line);
  void sample(std::string_view line);
  bool labels(std::string_view line, std::size_t& pos, std::map<std::string, std::string>& out);
  std::string family_of(const std::string& name);
  void check_histograms();

  Exposition out_;
  std::size_t line_no_ = 0;
  std::map<std::string, Family> families_;
  std::string current_;  // family of the last sample
  // histogram family -> label set without le -> (le, cumulative) in order; plus _count and _sum.
  std::map<std::string, std::map<std::string, std::vector<std::pair<double, double>>>> buckets_;
  std::map<std::string, std::map<std::string, double>> counts_;
  std::set<std::string> sums_;
};

void Checker::comment(std::string_view line) {
  const bool help = line.rfind("# HELP ", 0) == 0;
  if (!help && line.rfind("# TYPE ", 0) != 0) return fail("a comment that is neither HELP nor TYPE");
  std::size_t pos = 7;
  const std::string name = read_name(line, pos, true);
  if (name.empty()) return fail("HELP/TYPE without a metric name");
  Family& family = families_[name];
  if (current_ == name || family.samples_done) return fail("HELP/TYPE of " + name + " after its samples");
  if (help) {
    if (family.help) return fail("second HELP for " + name);
    family.help = true;
    if (pos < line.size() && line[pos] != ' ') return fail("bad HELP line");
    for (std::size_t i = pos; i < line.size(); ++i) {
      if (line[i] == '\\' && (i + 1 >= line.size() || (line[i + 1] != '\\' && line[i + 1] != 'n'))) {
        return fail("bad escape in HELP of " + name);
      }
      if (line[i] == '\\') ++i;
    }
    return;
  }
  if (!family.type.empty()) return fail("second TYPE for " + name);
  const std::string_view type = pos < line.size() ? line.substr(pos + 1) : std::string_view();
  if (type != "counter" && type != "gauge" && type != "histogram" && type != "summary" && type != "untyped") {
    return fail("unknown type '" + std::string(type) + "'");
  }
  family.type = std::string(type);
  out_.types[name] = family.type;
}

bool Checker::labels(std::string_view line, std::size_t& pos, std::map<std::string, std::string>& out) {
  ++pos;  // '{'
  while (pos < line.size() && line[pos] != '}') {
    const std::string key = read_name(line, pos, false);
    if (key.empty() || pos + 1 >= line.size() || line[pos] != '=' || line[pos + 1] != '"') return false;
    pos += 2;
    std::string value;
    for (;;) {
      if (pos >= line.size()) return false;
      const char c = line[pos++];
      if (c == '"') break;
      if (c == '\\') {
        if (pos >= line.size()) return false;
        const char e = line[pos++];
        if (e != '\\' && e != '"' && e != 'n') return false;
        value += e == 'n' ? '\n' : e;
      } else {
        value += c;
      }
    }
    if (!out.emplace(key, value).second) return false;  // a label twice
    if (pos < line.size() && line[pos] == ',') ++pos;
  }
  if (pos >= line.size()) return false;
  ++pos;  // '}'
  return true;
}

std::string Checker::family_of(const std::string& name) {
  if (families_.count(name) && !families_[name].type.empty()) return name;
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      const std::string base = name.substr(0, name.size() - s.size());
      if (families_.count(base) && families_[base].type == "histogram") return base;
    }
  }
  return "";
}

void Checker::sample(std::string_view line) {
  std::size_t pos = 0;
  const std::string name = read_name(line, pos, true);
  if (name.empty()) return fail("a sample without a valid metric name");
  std::map<std::string, std::string> label_map;
  if (pos < line.size() && line[pos] == '{' && !labels(line, pos, label_map)) return fail("bad label set on " + name);
  if (pos >= line.size() || line[pos] != ' ') return fail("no space before the value of " + name);
  std::string_view rest = line.substr(pos + 1);
  const std::size_t space = rest.find(' ');
  double value = 0;
  if (!parse_value(rest.substr(0, space), value)) return fail("bad value '" + std::string(rest) + "'");
  if (space != std::string_view::npos && rest.substr(space + 1).find_first_not_of("-0123456789") != std::string_view::npos) {
    return fail("bad timestamp");
  }
  const std::string family = family_of(name);
  if (family.empty()) return fail("sample " + name + " of no declared family");
  if (family != current_) {
    if (!current_.empty()) families_[current_].samples_done = true;
    if (families_[family].samples_done) return fail("samples of " + family + " are not together");
    current_ = family;
  }
  std::string key = name, without_le;
  for (const auto& [k, v] : label_map) {
    std::string escaped;
    for (char c : v) escaped += c == '\n' ? std::string("\\n") : (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    (key.size() == name.size() ? key += "{" : key += ",") += k + "=\"" + escaped + "\"";
    if (k != "le") without_le += k + "=\"" + escaped + "\",";
  }
  if (key.size() > name.size()) key += "}";
  if (!out_.series.emplace(key, value).second) return fail("series twice: " + key);
  const std::string& type = families_[family].type;
  if (type == "counter" && (value < 0 || name.size() < 6 || name.compare(name.size() - 6, 6, "_total") != 0)) {
    fail("counter " + name + " is negative or not named *_total");
  }
  if (type != "histogram") return;
  if (name == family + "_bucket") {
    double le = 0;
    if (!label_map.count("le") || !parse_value(label_map["le"], le)) return fail("bucket without a valid le");
    buckets_[family][without_le].emplace_back(le, value);
  } else if (name == family + "_count") {
    counts_[family][without_le] = value;
  } else if (name == family + "_sum") {
    sums_.insert(family + "|" + without_le);
  } else {
    fail("histogram " + family + " has a sample " + name);
  }
}

void Checker::check_histograms() {
  for (const auto& [family, sets] : buckets_) {
    for (const auto& [set, list] : sets) {
      for (std::size_t i = 1; i < list.size(); ++i) {
        if (!(list[i].first > list[i - 1].first)) fail(family + ": le not increasing");
        if (list[i].second < list[i - 1].second) fail(family + ": buckets not cumulative");
      }
      if (list.empty() || !std::isinf(list.back().first)) {
        fail(family + ": no le=\"+Inf\" bucket");
        continue;
      }
      if (!counts_[family].count(set) || counts_[family][set] != list.back().second) fail(family + ": _count differs from +Inf bucket");
      if (!sums_.count(family + "|" + set)) fail(family + ": no _sum");
    }
  }
}

Exposition Checker::run(std::string_view text) {
  if (text.empty() || text.back() != '\n') {
    fail("the text does not end with a line feed");
  }
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    ++line_no_;
    if (line.empty()) {
      fail("an empty line");
    } else if (line.find('\r') != std::string_view::npos || line.find('\0') != std::string_view::npos) {
      fail("a carriage return or NUL in a line");
    } else if (line[0] == '#') {
      comment(line);
    } else {
      sample(line);
    }
    start = end + 1;
  }
  check_histograms();
  return std::move(out_);
}

}  // namespace

double Exposition::value(const std::string& name, const std::string& labels) const {
  const auto found = series.find(labels.empty() ? name : name + "{" + labels + "}");
  return found == series.end() ? -1 : found->second;
}

double Exposition::sum(const std::string& name) const {
  double total = 0;
  for (const auto& [key, v] : series) {
    if (key == name || key.rfind(name + "{", 0) == 0) total += v;
  }
  return total;
}

Exposition check_exposition(std::string_view text) { return Checker().run(text); }

}  // namespace posecast::test
