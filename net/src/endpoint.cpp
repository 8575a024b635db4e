#include "posecast/net/endpoint.h"

#include <charconv>

#include <asio/ip/address.hpp>

namespace posecast::net {

Result<Endpoint> parse_endpoint(std::string_view text) {
  // Built with append: gcc 12's -Wrestrict misfires on "literal" + std::string at -O3.
  std::string quoted;
  quoted.reserve(text.size() + 2);
  quoted.append(1, '"').append(text).append(1, '"');
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == text.size()) {
    return Error{"endpoint " + quoted + ": expected ADDR:PORT"};
  }
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535) {
    return Error{"endpoint " + quoted + ": port must be a number in 0..65535"};
  }
  std::error_code error;
  const asio::ip::address address = asio::ip::make_address(std::string(host), error);
  if (error) {
    return Error{"endpoint " + quoted + ": bad address \"" + std::string(host) + "\" (" +
                 error.message() + ")"};
  }
  return Endpoint(address, static_cast<unsigned short>(port));
}

std::string to_string(const Endpoint& endpoint) {
  const asio::ip::address address = endpoint.address();
  std::string text;
  if (address.is_v6()) text.append(1, '[');
  text.append(address.to_string());
  if (address.is_v6()) text.append(1, ']');
  text.append(1, ':').append(std::to_string(endpoint.port()));
  return text;
}

}  // namespace posecast::net
