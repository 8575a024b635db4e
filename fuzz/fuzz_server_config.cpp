// libFuzzer target: posecast-server's configuration, both ways in. Input starting with '{'
// (or empty) is a JSON config file's text for apply_config_json; anything else is a command
// line, one argument per line, for parse_server_config. Either must give a value or an
// error naming the flag or key, never a crash (ASan + UBSan in scripts/fuzz.sh's build).
// "--config" arguments are dropped: they would make the parser read files of the machine.
// Seeds: scripts/fuzz.sh writes a few command lines and config documents.

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "server_command_line.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace posecast::server;
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (text.empty() || text[0] == '{') {
    ServerConfig config;
    (void)apply_config_json(text, "fuzz.json", config);
    return 0;
  }
  std::vector<std::string> lines;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  std::vector<std::string> args;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] == "--config") {
      ++i;  // and its value
    } else if (lines[i].rfind("--config", 0) != 0) {
      args.push_back(lines[i]);
    }
  }
  (void)parse_server_config(args);
  return 0;
}
