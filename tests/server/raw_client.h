#pragma once
// A minimal client for server tests, built on protocol messages and a real UDP socket: it
// sends hand-made datagrams, collects what comes back, and (optionally) decodes snapshots into
// views exactly as docs/session.md describes, acking complete ones. The full client library is
// client/net; this one exists so the server's rules are tested on their own.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <asio/io_context.hpp>

#include "posecast/net/udp_transport.h"
#include "posecast/model.h"
#include "posecast/protocol/clip_dictionary.h"
#include "posecast/protocol/messages.h"
#include "posecast/protocol/pose_codec.h"
#include "posecast/protocol/pose_format.h"
#include "posecast/protocol/quantization.h"

namespace posecast::test {

struct Received {
  std::vector<uint8_t> bytes;
  std::optional<protocol::Message> message;  // when it decodes
};

class RawClient {
 public:
  explicit RawClient(asio::io_context& io);
  net::Endpoint endpoint() const { return transport_.local_endpoint(); }

  // Sends raw bytes / an encoded message (padded with zeros to `pad_to` bytes) to `to`.
  void send_bytes(std::span<const uint8_t> bytes, const net::Endpoint& to);
  void send(const protocol::Message& message, const net::Endpoint& to, std::size_t pad_to = 0);
  // Reads every waiting datagram into received() (and feeds snapshots to the views).
  void drain();
  std::vector<Received>& received() { return received_; }
  // Messages of type T received so far.
  template <class T>
  std::vector<T> all() const {
    std::vector<T> out;
    for (const Received& r : received_) {
      if (r.message) {
        if (const T* m = std::get_if<T>(&*r.message)) out.push_back(*m);
      }
    }
    return out;
  }
  uint64_t bytes_received_wire() const { return wire_bytes_; }
  uint64_t datagrams_sent() const { return transport_.counters().datagrams_sent; }
  uint64_t datagrams_received() const { return transport_.counters().datagrams_received; }

  // --- Snapshot decoding (optional): format and rig per model id (rig 0 only); the rig's clips
  // make the clip dictionary that decodes records predicted from recipes.
  void set_formats(std::vector<const protocol::PoseFormat*> formats, std::vector<const Rig*> rigs,
                   uint32_t tick_rate_hz);
  bool auto_ack = false;  // ack every complete view as it completes
  net::Endpoint server;   // where acks go
  struct View {
    uint32_t baseline = protocol::kNoTick, prior = protocol::kNoTick, older = protocol::kNoTick;
    uint8_t parts = 0;
    uint32_t parts_seen = 0;
    bool complete = false, failed = false;
    std::map<uint32_t, std::pair<uint16_t, protocol::QuantizedPose>> poses;  // id -> (gen, pose)
    std::map<uint32_t, bool> decoded;                                       // id -> from a record
  };
  std::map<uint32_t, View> views;
  std::map<uint32_t, std::pair<uint16_t, uint32_t>> known;  // id -> (generation, model)
  uint64_t decode_failures = 0;   // records whose pose did not decode (a server bug)
  uint64_t unknown_entities = 0;  // records before their spawn arrived (expected under loss)
  std::string first_failure;
  protocol::Ack ack() const;

 private:
  void on_snapshot(const protocol::Snapshot& part);
  void try_complete(uint32_t tick);

  net::UdpTransport transport_;
  std::vector<Received> received_;
  uint64_t wire_bytes_ = 0;
  std::vector<const protocol::PoseFormat*> formats_;
  std::vector<std::unique_ptr<protocol::ClipDictionary>> dictionaries_;
  protocol::QuantizedPose prediction_;
  uint32_t tick_rate_hz_ = 60;
};

// An encoded message (test helper; aborts the test on failure via the returned empty vector).
std::vector<uint8_t> encode(const protocol::Message& message);

}  // namespace posecast::test
