#pragma once
// The little HTTP/1.1 the fleet module speaks (RFC 9112), as pure functions: parsing a request
// head (the metrics listener) and a response (the Agones SDK client), and writing both. Every
// inbound byte is hostile: a head longer than kMaxHeadBytes, a bad request line, a bad header
// or a non-HTTP/1.x version is an Error saying which (the listener answers 4xx), never a crash.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "posecast/result.h"

namespace posecast::server::fleet {

// Longest request or response head accepted (request line / status line and headers).
inline constexpr std::size_t kMaxHeadBytes = 8 * 1024;
// Longest response body the client reads (a GameServer document is a few KiB).
inline constexpr std::size_t kMaxBodyBytes = 1024 * 1024;

struct RequestHead {
  std::string method;  // as sent: GET, HEAD, POST, ...
  std::string path;    // the target without its query ("/metrics")
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, values trimmed
};

// Where the head ends in `bytes` (one past its blank line), or 0 when it is not complete yet.
std::size_t head_length(std::string_view bytes);

// Parses a request head (`head` ends with its blank line). Errors: "bad request line ...",
// "bad header line ...", "unsupported version ...".
Result<RequestHead> parse_request_head(std::string_view head);

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> extra_headers;  // e.g. Allow
};

// The reason phrase of the statuses the module sends ("OK", "Not Found", ...).
const char* reason_phrase(int status);
// A complete HTTP/1.1 response closing the connection; `head_only` (a HEAD request): the
// headers of `response` without its body.
std::string write_response(const Response& response, bool head_only = false);

// An HTTP/1.0 request to `host` with a JSON body (may be empty): the server answers with the
// whole body and closes the connection (no chunked encoding to decode).
std::string write_json_request(std::string_view method, std::string_view path, std::string_view host,
                               std::string_view body);

// Parses a whole response (status line, headers, body up to Content-Length when given, else
// to the end of `bytes`). Errors: "bad status line", "bad header line", "body shorter than ...".
Result<Response> parse_response(std::string_view bytes);

}  // namespace posecast::server::fleet
