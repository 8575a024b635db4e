#include "fleet_test_support.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace posecast::test {
namespace {

// Waits up to `poll_ms` for bytes on `fd` and appends them to `into`; false when the peer has
// closed (or the socket failed).
bool read_available(int fd, std::string& into, int poll_ms) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, poll_ms) <= 0) return true;
  char buffer[4096];
  const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
  if (n <= 0) return false;
  into.append(buffer, static_cast<std::size_t>(n));
  return true;
}

}  // namespace

ChildProcess::ChildProcess(const std::string& program, const std::vector<std::string>& args,
                           const std::vector<std::string>& env) {
  int fds[2];
  if (::pipe(fds) != 0) return;
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    ::close(fds[1]);
    for (const std::string& e : env) ::putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv{const_cast<char*>(program.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  out_fd_ = fds[0];
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exited_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (out_fd_ >= 0) ::close(out_fd_);
}

void ChildProcess::pump(int timeout_ms) {
  pollfd p{out_fd_, POLLIN, 0};
  if (out_fd_ < 0 || ::poll(&p, 1, timeout_ms) <= 0) return;
  char buffer[4096];
  const ssize_t n = ::read(out_fd_, buffer, sizeof buffer);
  if (n > 0) output_.append(buffer, static_cast<std::size_t>(n));
}

std::string ChildProcess::wait_line(const std::string& prefix, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::size_t at = output_.rfind("\n" + prefix);
    if (output_.rfind(prefix, 0) == 0) at = 0; else if (at != std::string::npos) ++at;
    if (at != std::string::npos) {
      const std::size_t end = output_.find('\n', at);
      if (end != std::string::npos) return output_.substr(at + prefix.size(), end - at - prefix.size());
    }
    pump(50);
  }
  return "";
}

void ChildProcess::signal(int number) { ::kill(pid_, number); }

int ChildProcess::wait_exit(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    pump(20);
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      for (int i = 0; i < 20; ++i) pump(10);
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
  }
  return -1;
}

const std::string& ChildProcess::output() {
  pump(0);
  return output_;
}

HttpReply http_exchange(uint16_t port, const std::string& raw) {
  HttpReply reply;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return reply;
  }
  std::size_t sent = 0;
  while (sent < raw.size()) {
    const ssize_t n = ::send(fd, raw.data() + sent, raw.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may answer (431) and close before reading everything
    sent += static_cast<std::size_t>(n);
  }
  std::string received;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline && read_available(fd, received, 100)) {
  }
  ::close(fd);
  const std::size_t head_end = received.find("\r\n\r\n");
  if (received.rfind("HTTP/1.1 ", 0) != 0 || head_end == std::string::npos) return reply;
  reply.status = std::atoi(received.c_str() + 9);
  reply.head = received.substr(0, head_end);
  reply.body = received.substr(head_end + 4);
  return reply;
}

HttpReply http_get(uint16_t port, const std::string& path) {
  return http_exchange(port, "GET " + path + " HTTP/1.1\r\nHost: test\r\n\r\n");
}

StandInSidecar::StandInSidecar() {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::listen(listen_fd_, 16);
  socklen_t length = sizeof address;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  thread_ = std::thread([this] { serve(); });
}

StandInSidecar::~StandInSidecar() {
  stop_ = true;
  thread_.join();
  ::close(listen_fd_);
}

std::vector<SidecarRequest> StandInSidecar::requests() {
  std::lock_guard lock(mutex_);
  return requests_;
}

void StandInSidecar::set_state(const std::string& state) {
  std::lock_guard lock(mutex_);
  state_ = state;
}

// One request per connection, as the server's client sends them (HTTP/1.0, Content-Length).
void StandInSidecar::serve() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    std::string received;
    std::size_t head_end = std::string::npos, length = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < deadline && read_available(fd, received, 50)) {
      head_end = received.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        const std::size_t cl = received.find("Content-Length: ");
        length = cl == std::string::npos ? 0 : std::strtoul(received.c_str() + cl + 16, nullptr, 10);
        if (received.size() >= head_end + 4 + length) break;
      }
    }
    SidecarRequest request;
    request.at = std::chrono::steady_clock::now();
    request.method = received.substr(0, received.find(' '));
    const std::size_t path_start = request.method.size() + 1;
    request.path = received.substr(path_start, received.find(' ', path_start) - path_start);
    if (head_end != std::string::npos) request.body = received.substr(head_end + 4, length);
    std::string body = "{}";
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(request);
      if (request.path == "/gameserver") {
        body = R"({"object_meta":{"name":"posecast-x"},"status":{"state":")" + state_ + R"(","address":"127.0.0.1"}})";
      }
    }
    const std::string reply = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;
    ::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
    ::close(fd);
  }
}

}  // namespace posecast::test
