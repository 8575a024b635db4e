#include "soak_run.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

#include <spdlog/spdlog.h>

#include "posecast/client/net_client.h"
#include "posecast/rig/model_source.h"
#include "posecast/server/server.h"
#include "session_ledger.h"

namespace posecast::soak {
namespace {

using client::NetClient;

// splitmix64: a small seeded generator whose draws are the same everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) / 9007199254740992.0; }
  int64_t between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(unit() * static_cast<double>(hi - lo));
  }

 private:
  uint64_t state_;
};

constexpr int64_t kSecond = 1'000'000;
// How late after vanish + timeout the server may end a silent client's session: it heard the
// client last at its first tick after the vanish, and checks timeouts once per tick.
constexpr int64_t kTimeoutTolerance = kSecond / 2;
// A retired client's socket stays bound at least this long after its last send, so that an
// answer still on its way can open a session the ledger sees before the address is freed.
constexpr int64_t kReleaseGrace = kSecond;

class SoakRun {
 public:
  explicit SoakRun(const SoakOptions& o) : o_(o), rng_(o.seed) {}

  Result<SoakReport> run() {
    spdlog::set_level(spdlog::level::warn);
    if (Status s = setup(); !s) return s.error();
    const int64_t end = static_cast<int64_t>(o_.duration_s * 1e6);
    const int64_t frame = std::max<int64_t>(static_cast<int64_t>(o_.frame_ms * 1000.0), 100);
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      slots_[i].next_event = o_.churn ? rng_.between(0, kSecond) : 0;
    }
    int64_t next_frame = 0;
    int64_t next_check = kSecond / 2;
    int64_t next_respawn = 2 * kSecond;
    while (true) {
      const int64_t next_tick = tick_time(server_->world().tick_index());
      const int64_t t = std::min(next_tick, next_frame);
      if (t > end) break;
      now_ = t;
      if (t == next_tick) {
        entity_churn(next_respawn);
        server_->tick(now_);
      }
      if (t == next_frame) {
        for (std::size_t i = 0; i < slots_.size(); ++i) step_slot(i, end, frame);
        tend_retired();
        if (now_ >= next_check) {
          for (Slot& s : slots_) check(s);
          prune();
          next_check += kSecond / 2;
        }
        next_frame += frame;
      }
    }
    for (Slot& s : slots_) {
      if (!s.client) continue;
      check(s);
      s.client->disconnect(now_);
      retire(s, true);
    }
    // Let the goodbyes through the simulated links before the server's counters are read.
    const int64_t stop = now_ + kSecond;
    while (draining() && now_ < stop) {
      now_ += frame;
      tend_retired();
    }
    finish(end);
    return report_;
  }

 private:
  struct Slot {
    std::unique_ptr<NetClient> client;
    int64_t next_event = 0;
    int64_t joined_at = 0;
    bool counted_connect = false;
    uint32_t checked_until = 0;
    uint32_t joins = 0;
  };

  int64_t tick_time(uint64_t tick) const {
    return static_cast<int64_t>(tick) * kSecond / static_cast<int64_t>(o_.tick_rate_hz);
  }

  Status setup() {
    Result<Model> loaded = rig::load_model_source(o_.model);
    if (!loaded) return Error{"soak: " + loaded.error().message};
    model_ = std::make_shared<const Model>(std::move(loaded).value());
    if (model_->rigs.empty() || model_->rigs[0].clips.empty()) {
      return Error{"soak: " + o_.model + ": needs a rig with at least one clip"};
    }
    library_ = std::make_shared<client::AssetLibrary>();
    if (Status s = library_->add(model_); !s) return s;
    server::ServerOptions so;
    so.listen = net::Endpoint(asio::ip::make_address_v4("127.0.0.1"), 0);
    so.tick_rate_hz = o_.tick_rate_hz;
    so.send_rate_hz = o_.send_rate_hz;
    // Vanished clients hold their session until the server times them out (5 s), while their
    // slot may already have rejoined: room for several sessions per slot.
    so.max_clients = std::min<uint32_t>(o_.clients * 4 + 8, 65535);
    so.threads = 1;
    ledger_.emplace(so.timeout_us, kTimeoutTolerance);
    std::array<uint8_t, 16> key{};
    for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(rng_.next());
    so.cookie_key = key;
    Result<std::unique_ptr<server::Server>> created = server::Server::create(io_, so, {model_});
    if (!created) return Error{"soak: " + created.error().message};
    server_ = std::move(created).value();
    server_->on_pose_quantized([this](uint32_t tick, sim::EntityId id, uint16_t,
                                      const protocol::QuantizedPose& pose) {
      std::vector<glm::mat4>& p = palettes_[key_of(tick, id)];
      p.resize(skeleton().joint_count());
      if (!protocol::quantized_palette(skeleton(), *server_->pose_format(0, 0), pose, scratch_, p)) {
        report_.violations.push_back("server palette of entity " + std::to_string(id) + " tick " +
                                     std::to_string(tick) + " could not be computed");
      }
    });
    server_->on_client_connected([this](const server::ClientInfo& info) {
      ledger_->session_opened(info.endpoint, info.id);
    });
    server_->on_client_disconnected([this](const server::ClientInfo& info, protocol::DisconnectReason reason) {
      ledger_->session_closed(info.endpoint, info.id, reason, now_);
    });
    for (uint32_t i = 0; i < o_.entities; ++i) spawn(i + 1, i);
    slots_.resize(o_.clients);
    return {};
  }

  const Skeleton& skeleton() const { return model_->rigs[0].skeleton; }
  static uint64_t key_of(uint32_t tick, uint32_t id) { return (uint64_t{tick} << 32) | id; }

  void spawn(sim::EntityId id, uint32_t variant) {
    sim::Command spawn_command{0, id, sim::SpawnCommand{0, 0, {}}};
    server_->submit(spawn_command);
    sim::MotionSpec motion;
    const std::size_t clips = model_->rigs[0].clips.size();
    motion.clips[0].clip = static_cast<uint16_t>(variant % clips);
    motion.start_offset_us = static_cast<int64_t>(variant) * 61'000;
    server_->play(id, 0, motion);
    server_->set_position(id, server::Vec3{static_cast<float>(variant % 10), 0, static_cast<float>(variant / 10)});
  }

  // Every 2 s one entity is despawned and, two ticks later, respawned under the same id.
  void entity_churn(int64_t& next_respawn) {
    if (!o_.churn || o_.entities == 0) return;
    if (pending_respawn_ != 0 && server_->world().tick_index() >= respawn_tick_) {
      spawn(pending_respawn_, static_cast<uint32_t>(rng_.next() % 1000));
      pending_respawn_ = 0;
      ++report_.respawns;
    }
    if (now_ >= next_respawn && pending_respawn_ == 0) {
      const sim::EntityId id = static_cast<sim::EntityId>(1 + rng_.next() % o_.entities);
      server_->despawn(id);
      pending_respawn_ = id;
      respawn_tick_ = server_->world().tick_index() + 2;
      next_respawn += 2 * kSecond;
    }
  }

  client::NetClientOptions client_options(std::size_t slot) {
    client::NetClientOptions c;
    c.server = server_->local_endpoint();
    c.local = net::Endpoint(asio::ip::make_address_v4("127.0.0.1"), 0);
    c.assets = library_;
    c.load_missing_assets = false;
    c.name = "soak-" + std::to_string(slot);
    c.nonce = rng_.next() | 1;
    c.channel_arrival_times = false;  // simulated time: the socket's timestamps are real time
    if (o_.loss_percent > 0 || o_.latency_ms > 0 || o_.jitter_ms > 0 || o_.reorder_percent > 0) {
      net::SimulatorConfig sim;
      sim.seed = rng_.next();
      net::LinkConditions link;
      link.latency_us = static_cast<int64_t>(o_.latency_ms * 1000.0);
      link.jitter_us = static_cast<int64_t>(o_.jitter_ms * 1000.0);
      link.loss_percent = o_.loss_percent;
      link.reorder_percent = o_.reorder_percent;
      sim.inbound = link;
      sim.outbound = link;
      c.simulator = sim;
    }
    return c;
  }

  void step_slot(std::size_t i, int64_t end, int64_t frame) {
    Slot& s = slots_[i];
    if (!s.client) {
      if (now_ < s.next_event) return;
      s.client = std::make_unique<NetClient>(io_, client_options(i));
      s.joined_at = now_;
      s.counted_connect = false;
      s.checked_until = 0;
      ++s.joins;
      ++report_.joins;
      if (Status st = s.client->connect(now_); !st) {
        report_.violations.push_back("slot " + std::to_string(i) + ": " + st.error().message);
        s.client.reset();
        s.next_event = end + 1;
        return;
      }
      s.next_event = o_.churn ? now_ + rng_.between(3 * kSecond / 2, 6 * kSecond) : end + 1;
      return;
    }
    NetClient& c = *s.client;
    c.update(now_);
    if (!s.counted_connect && c.connected()) {
      s.counted_connect = true;
      ++report_.connects;
    }
    if (c.connected()) {
      report_.connected_seconds += static_cast<double>(frame) / 1e6;
      const double delay = c.stats(now_).delay_ms;
      if (now_ - s.joined_at > 3 * kSecond) {
        report_.max_delay_ms = std::max(report_.max_delay_ms, delay);
        delay_sum_ += delay;
        ++delay_samples_;
      }
    }
    if (c.state() == client::ConnectionState::kFailed) {
      ++report_.failed_connects;
      report_.violations.push_back("slot " + std::to_string(i) + " join " + std::to_string(s.joins) + ": " + c.error());
      retire(s);
      s.next_event = now_ + kSecond;
      return;
    }
    if (c.state() == client::ConnectionState::kDisconnected) {
      ++report_.dropped_by_server;
      report_.violations.push_back("slot " + std::to_string(i) + " join " + std::to_string(s.joins) +
                                   ": dropped: " + c.error());
      retire(s);
      s.next_event = now_ + kSecond;
      return;
    }
    if (o_.churn && now_ >= s.next_event) {
      check(s);
      bool leaving = false;
      if (rng_.unit() < 0.6) {
        c.disconnect(now_);
        ++report_.leaves;
        leaving = true;
      } else {
        ++report_.vanishes;  // no goodbye, and nothing sent from now on
        ledger_->client_vanished(c.local_endpoint(), now_);
      }
      retire(s, leaving);
      s.next_event = now_ + rng_.between(kSecond / 5, 3 * kSecond / 2);
    }
  }

  // Compares every decoded record of the complete views not yet checked with the server.
  void check(Slot& s) {
    if (!s.client) return;
    const client::SnapshotBuffer& buffer = s.client->buffer();
    uint32_t newest = s.checked_until;
    for (std::size_t v = 0; v < buffer.size(); ++v) {
      const client::SnapshotView& view = buffer.view_at(v);
      if (view.tick <= s.checked_until || !view.complete) continue;
      newest = std::max(newest, view.tick);
      for (const client::ViewEntry& e : view.entries) {
        if (!e.decoded) continue;
        const client::PoseSample* sample = buffer.sample(view.tick, e.entity_id, e.generation);
        auto truth = palettes_.find(key_of(view.tick, e.entity_id));
        ++report_.palettes_compared;
        // Decoded poses carry no palette: computed on demand from the decoded locals, with
        // the jobs the client's presentation runs (PoseSample::compute_palette).
        const std::vector<glm::mat4> palette =
            sample != nullptr ? sample->palette() : std::vector<glm::mat4>{};
        if (sample == nullptr || truth == palettes_.end() || palette.empty() ||
            palette.size() != truth->second.size()) {
          ++report_.palette_mismatches;
          continue;
        }
        double worst = 0;
        for (std::size_t j = 0; j < palette.size(); ++j) {
          for (int col = 0; col < 4; ++col) {
            for (int row = 0; row < 4; ++row) {
              const float a = palette[j][col][row];
              const float b = truth->second[j][col][row];
              if (std::memcmp(&a, &b, sizeof a) != 0) {
                worst = std::max(worst, std::fabs(static_cast<double>(a) - static_cast<double>(b)));
                if (worst == 0) worst = 1e-300;  // differs in bits only (e.g. -0 vs 0)
              }
            }
          }
        }
        if (worst > 0) ++report_.palette_mismatches;
        report_.max_palette_error = std::max(report_.max_palette_error, worst);
      }
    }
    s.checked_until = newest;
  }

  // Server palettes older than any client buffer can hold are dropped.
  void prune() {
    const uint64_t tick = server_->world().tick_index();
    const uint64_t keep = uint64_t{o_.tick_rate_hz} * 12;
    if (tick <= keep) return;
    const uint64_t oldest = tick - keep;
    palettes_.erase(palettes_.begin(), palettes_.lower_bound(oldest << 32));
  }

  // A client that said goodbye keeps running (not decoding: it is disconnected) until its
  // simulated link has delivered the three Disconnects (at most 1 s). After that, and from
  // the start for one that vanished, it is silent: never updated, so it sends nothing, but
  // its socket stays bound until the server holds no session at its address (and
  // kReleaseGrace has passed). Otherwise the kernel could give that port to a new client,
  // which the server would take for the silent one restarting (session_ledger.h).
  void tend_retired() {
    for (std::size_t i = 0; i < retired_.size();) {
      Retired& r = retired_[i];
      if (r.draining) {
        r.client->update(now_);
        const net::NetworkSimulator* sim = r.client->simulator();
        if (sim == nullptr || sim->outbound_queued() == 0 || now_ >= r.drain_until) {
          r.draining = false;
          r.silent_since = now_;
        }
      }
      if (!r.draining && now_ - r.silent_since >= kReleaseGrace && !ledger_->holds_session(r.address)) {
        ledger_->address_released(r.address);
        retired_.erase(retired_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
  }

  bool draining() const {
    return std::any_of(retired_.begin(), retired_.end(), [](const Retired& r) { return r.draining; });
  }

  void retire(Slot& s, bool drain = false) {
    // A response may have reached the server while its Welcome is still on the way.
    if (s.client->state() == client::ConnectionState::kSendingResponse ||
        (!s.counted_connect && s.client->stats(now_).responses_sent > 0)) {
      ++report_.pending_welcomes;
    }
    const client::ClientStats st = s.client->stats(now_);
    report_.datagrams_in += st.datagrams_in;
    report_.datagrams_out += st.datagrams_out;
    report_.bytes_in += st.bytes_in;
    report_.bytes_out += st.bytes_out;
    report_.snapshots_complete += st.snapshots_complete;
    report_.records_decoded += st.records_decoded;
    report_.decode_errors += st.decode_errors;
    report_.missing_reference += st.missing_reference;
    report_.unknown_entity += st.unknown_entity;
    report_.stale_records += st.stale_records;
    report_.dropped_malformed += st.dropped_malformed;
    report_.dropped_unexpected += st.dropped_unexpected;
    report_.corrections += st.corrections;
    Retired r;
    r.address = s.client->local_endpoint();
    r.draining = drain && s.client->simulator() != nullptr;
    r.drain_until = now_ + kSecond;
    r.silent_since = now_;
    r.client = std::move(s.client);
    retired_.push_back(std::move(r));
  }

  void finish(int64_t end) {
    report_.server = server_->metrics();
    const server::ServerMetrics& m = report_.server;
    if (report_.connected_seconds > 0) {
      report_.kbit_in_per_client = static_cast<double>(report_.bytes_in) * 8.0 / 1000.0 / report_.connected_seconds;
      report_.kbit_out_per_client = static_cast<double>(report_.bytes_out) * 8.0 / 1000.0 / report_.connected_seconds;
    }
    if (delay_samples_ > 0) report_.mean_delay_ms = delay_sum_ / static_cast<double>(delay_samples_);
    auto violation = [&](bool bad, const std::string& what) {
      if (bad) report_.violations.push_back(what);
    };
    violation(report_.palette_mismatches != 0,
              std::to_string(report_.palette_mismatches) + " decoded palettes differ from the server's");
    violation(report_.decode_errors != 0, std::to_string(report_.decode_errors) + " client decode errors");
    violation(report_.missing_reference != 0,
              std::to_string(report_.missing_reference) + " records coded against a view the client did not hold");
    violation(report_.dropped_malformed != 0,
              std::to_string(report_.dropped_malformed) + " malformed datagrams reached a client");
    violation(report_.palettes_compared == 0 && o_.entities > 0 && o_.duration_s >= 2, "no palette was compared");
    violation(m.connections < report_.connects ||
                  m.connections > report_.connects + report_.pending_welcomes,
              "server accepted " + std::to_string(m.connections) + " connections, clients saw " +
                  std::to_string(report_.connects) + " (+" + std::to_string(report_.pending_welcomes) +
                  " whose Welcome was still on the way)");
    // The timeout invariant, session by session (session_ledger.h): every session of a client
    // that vanished ends by a timeout within timeout + tolerance of the vanish; one whose
    // deadline fell before the end and is still open is a leak. Not "server timeouts >=
    // vanishes due": the server knows a client by its address only, and a newcomer on a
    // vanished client's port ends that session as replaced, not timed out. Retired clients
    // keep their ports bound while the server holds their session (tend_retired), so that
    // cannot happen here; a vanished client's queued datagrams die with its simulator, and
    // what it had sent reaches the server by its next tick, well inside the tolerance. The
    // check depends on neither the kernel's port choice nor the moment a datagram is read
    // (soak_run.h, "Determinism").
    const LedgerCounts ledger = ledger_->finish(end, report_.violations);
    report_.vanishes_timeout_due = ledger.timeout_due;
    report_.vanishes_timed_out = ledger.timed_out_in_time;
    report_.vanishes_before_session = ledger.vanished_without_session;
    violation(m.timeouts > report_.vanishes + report_.leaves,
              "server timed out " + std::to_string(m.timeouts) + " clients, more than left or vanished");
    using server::DropReason;
    for (DropReason r : {DropReason::kMalformed, DropReason::kOversized, DropReason::kHelloTooSmall,
                         DropReason::kBadChallenge, DropReason::kProtocolMismatch, DropReason::kServerFull,
                         DropReason::kBadAck, DropReason::kBadCommand, DropReason::kRateLimited}) {
      const uint64_t n = m.drops[static_cast<std::size_t>(r)];
      violation(n != 0, "server dropped " + std::to_string(n) + " datagrams of well-behaved clients as " +
                            server::to_string(r));
    }
  }

  SoakOptions o_;
  Rng rng_;
  asio::io_context io_;
  std::shared_ptr<const Model> model_;
  std::shared_ptr<client::AssetLibrary> library_;
  // Declared before the server, whose callbacks use them until it is destroyed.
  int64_t now_ = 0;
  std::optional<SessionLedger> ledger_;  // created with the server's timeout
  std::unique_ptr<server::Server> server_;
  std::map<uint64_t, std::vector<glm::mat4>> palettes_;
  protocol::PaletteScratch scratch_;
  std::vector<Slot> slots_;
  // Clients that left, vanished, failed or were dropped, still holding their socket.
  struct Retired {
    std::unique_ptr<NetClient> client;
    net::Endpoint address;     // the socket's bound address, as the server sees it
    bool draining = false;     // still updated, until its goodbyes are delivered
    int64_t drain_until = 0;
    int64_t silent_since = 0;  // the last update that could send anything
  };
  std::vector<Retired> retired_;
  sim::EntityId pending_respawn_ = 0;
  uint64_t respawn_tick_ = 0;
  double delay_sum_ = 0;
  uint64_t delay_samples_ = 0;
  SoakReport report_;
};

}  // namespace

Result<SoakReport> run_soak(const SoakOptions& options) { return SoakRun(options).run(); }

}  // namespace posecast::soak
