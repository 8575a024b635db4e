#pragma once
// Test helpers for the fleet tests: posecast-server as a child process (its output collected),
// a blocking HTTP exchange written apart from the server's own client, and a stand-in Agones
// SDK sidecar on loopback that records every request it gets.

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace posecast::test {

class ChildProcess {
 public:
  // Starts `program` with `args`; `env` entries ("NAME=value") are added to the environment.
  ChildProcess(const std::string& program, const std::vector<std::string>& args,
               const std::vector<std::string>& env = {});
  ~ChildProcess();  // kills the child if it still runs
  // Waits until the output holds a line starting with `prefix`; returns the rest of it ("" on timeout).
  std::string wait_line(const std::string& prefix, std::chrono::milliseconds timeout = std::chrono::seconds(20));
  void signal(int number);
  // Waits for the exit; its status code, or -1 on timeout or a signal death.
  int wait_exit(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  const std::string& output();  // everything read so far

 private:
  void pump(int timeout_ms);
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string output_;
  bool exited_ = false;
};

struct HttpReply {
  int status = 0;  // 0: no answer
  std::string head, body;
};
// Sends `raw` bytes to 127.0.0.1:`port` and reads until the server closes (5 s at most).
HttpReply http_exchange(uint16_t port, const std::string& raw);
HttpReply http_get(uint16_t port, const std::string& path);

struct SidecarRequest {
  std::string method, path, body;
  std::chrono::steady_clock::time_point at;
};

// A stand-in for the Agones SDK sidecar's REST port: answers POST /ready, /health, /shutdown
// with "{}" and GET /gameserver with a GameServer whose status.state is `state`.
class StandInSidecar {
 public:
  StandInSidecar();
  ~StandInSidecar();
  uint16_t port() const { return port_; }
  std::vector<SidecarRequest> requests();
  void set_state(const std::string& state);

 private:
  void serve();
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<SidecarRequest> requests_;
  std::string state_ = "Ready";
  std::thread thread_;
};

}  // namespace posecast::test
