#pragma once
// Network endpoints (IPv4/IPv6 address + UDP port) and the one place that parses "ADDR:PORT".

#include <cstdint>
#include <string>
#include <string_view>

#include <asio/ip/udp.hpp>

#include "posecast/result.h"

namespace posecast::net {

using Endpoint = asio::ip::udp::endpoint;

// Time as the caller passes it in: microseconds on a monotonic clock of the caller's choice.
using MicrosTime = int64_t;

// Bytes an IPv4 UDP datagram costs beyond its payload (20-byte IP header + 8-byte UDP header).
// Bandwidth budgets and the simulator's link limit count them.
inline constexpr uint32_t kUdpIpv4HeaderBytes = 28;

// Parses "127.0.0.1:7777", "[::1]:7777" or "0.0.0.0:0" (port 0 = any free port).
// Fails with a message naming `text` and the reason (no port, bad address, port > 65535).
Result<Endpoint> parse_endpoint(std::string_view text);

// "127.0.0.1:7777" / "[::1]:7777".
std::string to_string(const Endpoint& endpoint);

}  // namespace posecast::net
