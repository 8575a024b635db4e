#pragma once
// posecast-server's command line, in the common style (cli/common/command_line.h): each
// setting of server_config.h as a flag (--tick-rate), as an environment variable
// (POSECAST_TICK_RATE: containers configure servers that way) and as a key of the JSON file
// named by --config (or POSECAST_CONFIG). Precedence: command line > environment > config file
// > default (docs/server.md).

#include <span>
#include <string>

#include "posecast/result.h"
#include "posecast/server/server_config.h"

namespace posecast::server {

inline constexpr char kServerProgram[] = "posecast-server";

// Reads `args` (without the program name) and the POSECAST_* environment. --help sets
// `help` (print server_usage()). Errors name the flag, the variable or the file key and say
// why, without the program name: "--tick-rate: 0 is not in 1..1000",
// "POSECAST_TICK_RATE: 0 is not in 1..1000", "server.json: send_rate: ...",
// "The following argument was not expected: --bogus". Prints nothing.
Result<ServerConfig> parse_server_config(std::span<const std::string> args);

// The --help text.
std::string server_usage();

}  // namespace posecast::server
