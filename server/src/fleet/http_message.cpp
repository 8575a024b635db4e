#include "http_message.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace posecast::server::fleet {
namespace {

// RFC 9110 "token" characters (methods, header names).
bool is_token_char(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), is_token_char);
}

// Printable ASCII, no spaces: a request target.
bool is_target(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// What a short excerpt of hostile text looks like in an error: printable, at most 40 bytes.
std::string excerpt(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 40)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

// Splits `block` (lines ending in CRLF, the last one blank) into lines without the CRLF.
std::vector<std::string_view> lines_of(std::string_view block) {
  std::vector<std::string_view> lines;
  while (!block.empty()) {
    const std::size_t end = block.find("\r\n");
    if (end == std::string_view::npos) {
      lines.push_back(block);
      break;
    }
    lines.push_back(block.substr(0, end));
    block.remove_prefix(end + 2);
  }
  return lines;
}

// Header lines (after the first line, up to the blank one) as lower-cased names and values.
Result<std::vector<std::pair<std::string, std::string>>> parse_headers(const std::vector<std::string_view>& lines) {
  std::vector<std::pair<std::string, std::string>> headers;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line.empty()) break;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || !is_token(line.substr(0, colon))) {
      return Error{"bad header line '" + excerpt(line) + "'"};
    }
    const std::string_view value = trim(line.substr(colon + 1));
    if (std::any_of(value.begin(), value.end(), [](char c) { return c == '\0' || c == '\r' || c == '\n'; })) {
      return Error{"bad header value in '" + excerpt(line) + "'"};
    }
    std::string name(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(), [](char c) { return static_cast<char>(std::tolower(c)); });
    headers.emplace_back(std::move(name), std::string(value));
  }
  return headers;
}

const std::string* find_header(const std::vector<std::pair<std::string, std::string>>& headers,
                                std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (key == name) return &value;
  }
  return nullptr;
}

}  // namespace

std::size_t head_length(std::string_view bytes) {
  const std::size_t end = bytes.find("\r\n\r\n");
  return end == std::string_view::npos ? 0 : end + 4;
}

Result<RequestHead> parse_request_head(std::string_view head) {
  const std::vector<std::string_view> lines = lines_of(head);
  if (lines.empty()) return Error{"bad request line ''"};
  const std::string_view line = lines.front();
  const std::size_t first = line.find(' ');
  const std::size_t second = first == std::string_view::npos ? first : line.find(' ', first + 1);
  if (second == std::string_view::npos || line.find(' ', second + 1) != std::string_view::npos) {
    return Error{"bad request line '" + excerpt(line) + "'"};
  }
  const std::string_view method = line.substr(0, first);
  const std::string_view target = line.substr(first + 1, second - first - 1);
  const std::string_view version = line.substr(second + 1);
  if (!is_token(method) || !is_target(target) || target.front() != '/') {
    return Error{"bad request line '" + excerpt(line) + "'"};
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return Error{"unsupported version '" + excerpt(version) + "'"};
  Result<std::vector<std::pair<std::string, std::string>>> headers = parse_headers(lines);
  if (!headers) return headers.error();
  RequestHead out;
  out.method = std::string(method);
  out.path = std::string(target.substr(0, target.find('?')));
  out.headers = std::move(headers).value();
  return out;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

std::string write_response(const Response& response, bool head_only) {
  std::string out = "HTTP/1.1 " + std::to_string(response.status) + " " + reason_phrase(response.status) + "\r\n";
  out += "Content-Type: " + response.content_type + "\r\n";
  out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
  for (const auto& [name, value] : response.extra_headers) out += name + ": " + value + "\r\n";
  out += "Connection: close\r\n\r\n";
  if (!head_only) out += response.body;
  return out;
}

std::string write_json_request(std::string_view method, std::string_view path, std::string_view host,
                               std::string_view body) {
  std::string out;
  // HTTP/1.0: the answer comes whole, ended by the close, never chunked.
  out.append(method).append(" ").append(path).append(" HTTP/1.0\r\nHost: ").append(host).append("\r\n");
  out += "Content-Type: application/json\r\nAccept: application/json\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  out.append(body);
  return out;
}

Result<Response> parse_response(std::string_view bytes) {
  const std::size_t head_end = head_length(bytes);
  if (head_end == 0) return Error{"incomplete response head"};
  const std::vector<std::string_view> lines = lines_of(bytes.substr(0, head_end));
  const std::string_view status_line = lines.front();
  // "HTTP/1.1 200 OK": a version, a three-digit status, an optional reason.
  int status = 0;
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ' ||
      std::from_chars(status_line.data() + 9, status_line.data() + 12, status).ec != std::errc() ||
      status < 100 || status > 599) {
    return Error{"bad status line '" + excerpt(status_line) + "'"};
  }
  Result<std::vector<std::pair<std::string, std::string>>> headers = parse_headers(lines);
  if (!headers) return headers.error();
  Response out;
  out.status = status;
  std::string_view body = bytes.substr(head_end);
  if (const std::string* type = find_header(headers.value(), "content-type")) out.content_type = *type;
  if (const std::string* coding = find_header(headers.value(), "transfer-encoding"); coding && *coding != "identity") {
    return Error{"unsupported transfer-encoding '" + excerpt(*coding) + "'"};
  }
  if (const std::string* length = find_header(headers.value(), "content-length")) {
    std::size_t expected = 0;
    const auto [end, ec] = std::from_chars(length->data(), length->data() + length->size(), expected);
    if (ec != std::errc() || end != length->data() + length->size() || expected > kMaxBodyBytes) {
      return Error{"bad content-length '" + excerpt(*length) + "'"};
    }
    if (body.size() < expected) {
      return Error{"body shorter than its content-length (" + std::to_string(body.size()) + " of " +
                   std::to_string(expected) + " bytes)"};
    }
    body = body.substr(0, expected);
  }
  out.body = std::string(body);
  return out;
}

}  // namespace posecast::server::fleet
