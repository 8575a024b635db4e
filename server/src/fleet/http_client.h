#pragma once
// One HTTP request with a JSON body to a local service (the Agones SDK sidecar), on Asio: connect,
// send, read the whole answer (the server closes the connection: HTTP/1.0), all within a
// deadline. Asynchronous on the caller's io_context; the callback gets the response or an Error
// ("connect 127.0.0.1:9358: Connection refused", "timed out after 1000 ms", "bad status line ...").

#include <chrono>
#include <functional>
#include <string>

#include <asio/io_context.hpp>

#include "http_message.h"
#include "posecast/net/endpoint.h"
#include "posecast/result.h"

namespace posecast::server::fleet {

using HttpCallback = std::function<void(Result<Response>)>;

// Sends `method path` with `body` to `to` and calls `done` exactly once, on the thread running
// `io`, after at most `timeout` (plus the io's latency). `io` must outlive the request.
void http_request(asio::io_context& io, const net::Endpoint& to, std::string method, std::string path,
                  std::string body, std::chrono::milliseconds timeout, HttpCallback done);

}  // namespace posecast::server::fleet
