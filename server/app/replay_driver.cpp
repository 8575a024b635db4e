#include "replay_driver.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "posecast/hash.h"
#include "posecast/replay/replayer.h"
#include "posecast/rig/model_source.h"
#include "progress.h"

namespace posecast::server {
namespace {

namespace fs = std::filesystem;

uint32_t wire_tick(uint64_t tick) { return static_cast<uint32_t>(std::min<uint64_t>(tick, protocol::kNoTick - 1)); }

}  // namespace

Result<std::unique_ptr<ReplayDriver>> ReplayDriver::load(const std::string& path, const std::string& assets_dir) {
  Result<std::shared_ptr<const replay::Recording>> read = replay::read_recording_file(path);
  if (!read) return Error{"--replay: " + read.error().message};
  std::unique_ptr<ReplayDriver> driver(new ReplayDriver());
  driver->path_ = path;
  driver->recording_ = std::move(read).value();
  const replay::Recording& rec = *driver->recording_;
  if (rec.ticks.empty()) return Error{"--replay " + path + ": the recording holds no tick to serve"};
  if (!rec.stop.benign()) {
    spdlog::warn("--replay {}: {}; serving the valid prefix ({} ticks)", path, rec.stop.message, rec.ticks.size());
  }
  const fs::path dir = fs::path(path).parent_path();
  for (std::size_t i = 0; i < rec.header.models.size(); ++i) {
    const replay::RecordedModel& recorded = rec.header.models[i];
    const std::string where = "--replay " + path + ": models[" + std::to_string(i) + "] '" + recorded.source + "'";
    const std::string source = rig::locate_model_source(recorded.source, dir, assets_dir);
    Result<Model> model = rig::load_model_source(source);
    if (!model) return Error{where + ": " + model.error().message};
    if (model.value().content_hash != recorded.content_hash) {
      return Error{where + ": asset hash mismatch: '" + source + "' has content hash " +
                   hash_hex(model.value().content_hash) + ", the recording " + hash_hex(recorded.content_hash) +
                   " (not the asset the session used)"};
    }
    driver->models_.push_back(std::make_shared<const Model>(std::move(model).value()));
  }
  if (driver->models_.empty()) return Error{"--replay " + path + ": the recording names no model"};
  return driver;
}

Status ReplayDriver::attach(Server& server) {
  server_ = &server;
  world_ = &server.world();
  const replay::Recording& rec = *recording_;
  Result<std::vector<uint8_t>> bytes = rec.snapshot(rec.checkpoints.front());
  if (!bytes) return Error{"--replay " + path_ + ": " + bytes.error().message};
  if (Status s = world_->restore(bytes.value()); !s) {
    return Error{"--replay " + path_ + ": first checkpoint (tick " + std::to_string(rec.checkpoints.front().tick) +
                 "): " + s.error().message};
  }
  position_q16_ = first_tick() << 16;
  shown_ = first_tick();
  server.on_replay_control([this](const ClientInfo& client, const protocol::ReplayControl& control) {
    spdlog::debug("replay: client {} sent {} (tick {}, ticks {}, speed {})", client.id, protocol::to_string(control.action),
                  control.tick, control.ticks, control.speed_q16);
    apply(control);
  });
  publish_status();
  spdlog::info("replay: {} | ticks {}..{} ({:.1f} s at {} Hz), checkpoints every {} ticks", path_, first_tick(),
               last_tick(), static_cast<double>(rec.ticks.size()) / tick_rate_hz(), tick_rate_hz(),
               rec.header.checkpoint_interval_ticks);
  return {};
}

void ReplayDriver::apply(const protocol::ReplayControl& control) {
  switch (control.action) {
    case protocol::ReplayAction::kPause:
      // The World stands at the boundary after the tick just shown: holding that next tick
      // needs no restore.
      if (!paused_) position_q16_ = std::min(shown_ + 1, last_tick()) << 16;
      paused_ = true;
      break;
    case protocol::ReplayAction::kResume:
      if (paused_ && shown_ >= last_tick()) {
        position_q16_ = first_tick() << 16;  // at the end: play again from the start
      } else if (paused_) {
        position_q16_ = (shown_ << 16) + static_cast<uint64_t>(speed_q16_);  // not the held tick once more
      }
      paused_ = false;
      break;
    case protocol::ReplayAction::kStep: {
      const uint64_t ticks = std::max<uint32_t>(control.ticks, 1);
      paused_ = true;
      position_q16_ = std::min(shown_ + ticks, last_tick()) << 16;
      break;
    }
    case protocol::ReplayAction::kSeek:
      position_q16_ = std::clamp<uint64_t>(control.tick, first_tick(), last_tick()) << 16;
      seek_requested_ = true;
      break;
    case protocol::ReplayAction::kSetSpeed:
      if (control.speed_q16 <= 0) {
        ++stats_.controls_refused;
        spdlog::info("replay: speed {} refused (> 0 expected; pause instead)", control.speed_q16);
        return;
      }
      speed_q16_ = std::clamp(control.speed_q16, kMinServedReplaySpeedQ16, kMaxServedReplaySpeedQ16);
      break;
    default:
      ++stats_.controls_refused;
      return;
  }
  ++stats_.controls_applied;
  publish_status();
}

void ReplayDriver::before_tick() {
  if (world_ == nullptr) return;
  if (verify_pending_ && world_->tick_index() == shown_ + 1) verify(shown_);
  verify_pending_ = false;

  const uint64_t target = std::min(position_q16_ >> 16, last_tick());
  if (!paused_) {
    if (target >= last_tick()) {
      paused_ = true;  // the end: hold the last tick
      spdlog::info("replay: end of the recording (tick {}); paused, resume plays from the start", target);
    } else {
      position_q16_ = (target << 16 | (position_q16_ & 0xFFFF)) + static_cast<uint64_t>(speed_q16_);
    }
  }
  const bool repeat = paused_ || (position_q16_ >> 16) == target;
  position_world(target, repeat);
  for (const replay::RecordedCommand& c : recording_->commands_at(target)) world_->submit(c.submitter, c.command);
  shown_ = target;
  verify_pending_ = true;
  ++stats_.ticks_shown;
  publish_status();
}

void ReplayDriver::finish() {
  if (world_ != nullptr && verify_pending_ && world_->tick_index() == shown_ + 1) verify(shown_);
  verify_pending_ = false;
}

void ReplayDriver::position_world(uint64_t tick, bool repeat) {
  const replay::Recording& rec = *recording_;
  const uint64_t next = world_->tick_index();
  const uint64_t interval = std::max<uint32_t>(rec.header.checkpoint_interval_ticks, 1);
  const auto started = std::chrono::steady_clock::now();
  const uint64_t stepped_before = stats_.ticks_stepped_over + stats_.ticks_fast_forwarded;
  const replay::Checkpoint* restored = nullptr;
  // A seek only needs the World at `tick`: the ticks on the way are fast-forwarded (a seek
  // then costs the restore plus little else). Playing faster than 1x and stepping still
  // evaluate and verify every tick they pass.
  const bool evaluate_on_the_way = !seek_requested_;
  // Steps to `tick`; a seek that takes a while shows progress on a terminal (never on a pipe).
  const auto forward_to_tick = [&] {
    const uint64_t from = world_->tick_index();
    cli::Progress progress(tick > from ? tick - from : 0, seek_requested_);
    while (world_->tick_index() < tick) {
      progress.update(world_->tick_index() - from);
      step_over(world_->tick_index(), evaluate_on_the_way);
    }
  };
  if (next == tick) {
    // Already there (playing at speed 1, or a held tick's successor).
  } else if (hold_tick_ == tick && !hold_bytes_.empty()) {
    if (restore(hold_bytes_, "held tick " + std::to_string(tick))) ++stats_.holds_restored;
  } else if (next < tick && (tick - next <= interval || rec.checkpoint_at_or_before(tick)->tick <= next)) {
    forward_to_tick();  // speed > 1, steps, short seeks
  } else {
    // Backwards, or far ahead: the nearest checkpoint, then forward (at most one interval).
    const replay::Checkpoint* checkpoint = rec.checkpoint_at_or_before(tick);
    Result<std::vector<uint8_t>> bytes = rec.snapshot(*checkpoint);
    if (!bytes) {
      ++stats_.restore_failures;
      spdlog::error("replay: seek to tick {}: {}", tick, bytes.error().message);
    } else if (restore(bytes.value(), "checkpoint at tick " + std::to_string(checkpoint->tick))) {
      restored = checkpoint;
      forward_to_tick();
    }
  }
  if (seek_requested_ || restored != nullptr) {
    // A seek's cost: restore (if any) plus the re-simulated ticks, wall time on the tick thread.
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    ++stats_.seeks;
    stats_.last_seek_ms = ms;
    stats_.max_seek_ms = std::max(stats_.max_seek_ms, ms);
    spdlog::info("replay: seek {} -> {}: {}{} ticks re-simulated, {:.2f} ms", shown_, tick,
                 restored != nullptr ? "checkpoint " + std::to_string(restored->tick) + " restored, " : std::string(),
                 stats_.ticks_stepped_over + stats_.ticks_fast_forwarded - stepped_before, ms);
    seek_requested_ = false;
  }
  if (repeat && hold_tick_ != tick && world_->tick_index() == tick) {
    hold_bytes_ = world_->snapshot();
    hold_tick_ = tick;
  }
}

bool ReplayDriver::restore(std::span<const uint8_t> bytes, const std::string& what) {
  if (Status s = world_->restore(bytes); !s) {
    ++stats_.restore_failures;
    spdlog::error("replay: {}: {}", what, s.error().message);
    return false;
  }
  return true;
}

void ReplayDriver::step_over(uint64_t tick, bool evaluate) {
  replay::replay_tick(*recording_, tick, *world_, evaluate);
  if (!evaluate) {
    ++stats_.ticks_fast_forwarded;  // no palettes to verify
    return;
  }
  ++stats_.ticks_stepped_over;
  verify(tick);
}

void ReplayDriver::verify(uint64_t tick) {
  const replay::TickRecord* record = recording_->tick_record(tick);
  if (record == nullptr) return;
  ++stats_.ticks_verified;
  // What the Recorder recorded: the World's tick check (posecast-server's World computes one
  // when it serves a recording: ServerOptions::tick_checks), and the world hash when the
  // recording's World hashed every palette (computed here from the palettes by the same
  // definition when this World does not hash).
  const sim::TickCheck& replayed = world_->tick_check();
  const sim::TickCheck recorded = recording_->tick_check(tick);
  const bool check_matches = sim::same_as_recorded(replayed.state, recorded.state, ~uint64_t{0}) &&
                             sim::same_as_recorded(replayed.palettes, recorded.palettes, sim::kPaletteTotalMask) &&
                             replayed.palettes_checked == recorded.palettes_checked;
  const uint64_t hash = record->world_hash != 0 ? world_->world_hash_of_palettes() : 0;
  if (check_matches && hash == record->world_hash) return;
  ++stats_.divergences;
  if (stats_.first_divergent_tick == UINT64_MAX) stats_.first_divergent_tick = tick;
  // The first few in full, then every 1000th: a broken replay must not flood the log.
  if (stats_.divergences <= 10 || stats_.divergences % 1000 == 0) {
    spdlog::warn("replay: tick {} diverges from the recording: {}world hash {}, recorded {} ({} so far; "
                 "`posecast replay {} --verify` names the entity and joint)",
                 tick, check_matches ? "" : "tick check differs; ", hash_hex(hash), hash_hex(record->world_hash),
                 stats_.divergences, path_);
  }
}

void ReplayDriver::publish_status() {
  if (server_ == nullptr) return;
  server_->set_replay_status(wire_tick(first_tick()), wire_tick(last_tick()), wire_tick(shown_),
                             paused_ ? 0 : speed_q16_);
}

std::string ReplayDriver::summary() const {
  char line[320];
  std::snprintf(line, sizeof line,
                "tick %" PRIu64 " %s x%.2f | shown %" PRIu64 ", verified %" PRIu64 ", divergences %" PRIu64
                ", seeks %" PRIu64 " (max %.2f ms), held %" PRIu64 ", controls %" PRIu64 " (+%" PRIu64 " refused)",
                shown_, paused_ ? "paused" : "playing", speed_q16_ / 65536.0, stats_.ticks_shown,
                stats_.ticks_verified, stats_.divergences, stats_.seeks, stats_.max_seek_ms, stats_.holds_restored,
                stats_.controls_applied, stats_.controls_refused);
  return line;
}

}  // namespace posecast::server
