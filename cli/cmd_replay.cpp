// posecast replay FILE [--verify] [--from T] [--to T] [--speed X] [--hashes OUT] [--threads N] [--events]
//                      [--assets DIR]
//
// Re-simulates a recording (docs/recording-format.md) from its commands on a fresh World, with
// the models its header names (checked by content hash). --verify compares every tick's tick
// check (state hash sums, a rotating sixteenth of the palette hashes) and world hash (when
// recorded) with the recording's and stops at the first divergence with a report naming the
// tick and entity (for a palette, the tick it was caught at and its last matching check), then
// the joint and the size of the difference.

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "progress.h"
#include "commands.h"
#include "posecast/hash.h"
#include "posecast/replay/divergence.h"
#include "posecast/replay/recording.h"
#include "posecast/replay/replayer.h"
#include "posecast/rig/model_source.h"

namespace posecast::cli {
namespace {

namespace fs = std::filesystem;

// What the command line asks for.
struct ReplayArgs {
  std::string path;
  bool verify = false;
  std::optional<uint64_t> from, to;  // default: the recording's first and last ticks
  double speed = 0.0;
  std::string hashes;                // empty: none
  unsigned threads = 1;
  std::string assets;
  bool events = false;  // print the recorded animation events of the played ticks
};

int fail(const std::string& why, int code) {
  std::fprintf(stderr, "posecast replay: %s\n", why.c_str());
  return code;
}

// Prints what the recording holds and how it ends. True when it is damaged: its valid prefix
// is replayed, with a warning.
bool print_recording_summary(const std::string& path, const replay::Recording& rec) {
  const replay::RecordingHeader& h = rec.header;
  std::printf("recording %s\n", path.c_str());
  std::printf("ticks %" PRIu64 "..%" PRIu64 " (%zu ticks, %.1f s at %u Hz), %zu commands, %zu checkpoints every %u ticks%s\n",
              rec.first_tick(), rec.end_tick() == 0 ? 0 : rec.end_tick() - 1, rec.ticks.size(),
              static_cast<double>(rec.ticks.size()) / h.tick_rate_hz, h.tick_rate_hz, rec.commands.size(),
              rec.checkpoints.size(), h.checkpoint_interval_ticks, h.has_palettes ? ", with palettes" : "");
  if (!h.producer.empty()) std::printf("producer %s\n", h.producer.c_str());
  std::printf("end %s: %s\n", replay::to_string(rec.stop.reason), rec.stop.message.c_str());
  const bool damaged = !rec.stop.benign();
  // One line naming the file, the chunk (type and offset) and the reason.
  if (damaged || rec.stop.reason == replay::StopReason::kTruncated) {
    std::fprintf(stderr, "posecast replay: warning: %s: %s; replaying the valid prefix (%zu ticks)\n", path.c_str(),
                 rec.stop.message.c_str(), rec.ticks.size());
  }
  return damaged;
}

// The --hashes file (none when not asked for): one line per played tick, the tick and every
// entity's palette hash in id order. close() reports a failed write on stderr.
class HashesFile {
 public:
  HashesFile() = default;
  HashesFile(const HashesFile&) = delete;
  HashesFile& operator=(const HashesFile&) = delete;
  ~HashesFile() { close(); }

  bool open(const std::string& path) {
    file_ = std::fopen(path.c_str(), "w");
    return file_ != nullptr;
  }
  void write(uint64_t tick, const sim::World& world) {
    if (file_ == nullptr) return;
    line_ = std::to_string(tick);
    for (std::size_t e = 0; e < world.entity_count(); ++e) line_ += " " + hash_hex(world.palette_hash_at(e));
    line_ += '\n';
    std::fputs(line_.c_str(), file_);
  }
  void close() {
    if (file_ != nullptr && std::fclose(file_) != 0) std::fprintf(stderr, "posecast replay: cannot write the hashes file\n");
    file_ = nullptr;
  }

 private:
  std::FILE* file_ = nullptr;
  std::string line_;
};

// The ticks to play and how.
struct Playback {
  uint64_t from = 0;
  uint64_t to = 0;
  double speed = 0.0;  // times real time; 0: as fast as possible
  bool verify = false;
  bool events = false;
  uint32_t tick_rate_hz = 0;
};

int report_divergence(replay::Replayer& replayer, const replay::ReplayStep& step, HashesFile& hashes) {
  hashes.close();
  const replay::DivergenceReport report = replay::diagnose_divergence(replayer, step.tick, step.world_hash, step.recorded_hash);
  std::printf("DIVERGENCE\n%s%s", replay::describe_check_mismatch(replayer.recording(), step).c_str(),
              report.to_text().c_str());
  std::fprintf(stderr, "posecast replay: the replay diverges from the recording at tick %" PRIu64 "\n", step.tick);
  return kExitFailure;
}

// Seeks to p.from (from the recording's first tick `first`), plays to p.to and prints the
// figures; the exit code (`damaged`: the recording's tail was damaged).
int play(replay::Replayer& replayer, const replay::Recording& rec, const Playback& p, uint64_t first,
         HashesFile& hashes, bool damaged) {
  const auto seek_start = std::chrono::steady_clock::now();
  replay::ReplayStep mismatch;
  bool mismatched = false;
  // With --verify the ticks stepped over are evaluated and checked too; without, they are only
  // fast-forwarded (Replayer::seek).
  if (Status s = replayer.seek(p.from, p.verify ? &mismatch : nullptr, p.verify ? &mismatched : nullptr); !s) {
    hashes.close();
    return fail(s.error().message, kExitFailure);
  }
  const double seek_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - seek_start).count();
  if (p.from != first) std::printf("seek to tick %" PRIu64 ": %.1f ms\n", p.from, seek_ms);
  if (p.verify && mismatched) return report_divergence(replayer, mismatch, hashes);

  const auto start = std::chrono::steady_clock::now();
  uint64_t played = 0;
  // Verifying a long recording takes a while; plain replays print their figures only.
  cli::Progress progress(p.to + 1 - p.from, p.verify);
  for (uint64_t t = p.from; t <= p.to; ++t) {
    progress.update(t - p.from);
    if (p.speed > 0.0) {
      const double due_s = static_cast<double>(t - p.from) / (p.tick_rate_hz * p.speed);
      std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                std::chrono::duration<double>(due_s)));
    }
    const replay::ReplayStep step = replayer.step();
    ++played;
    hashes.write(step.tick, replayer.world());
    if (p.verify && !step.matches()) return report_divergence(replayer, step, hashes);
    // The recording's events of this tick (docs/events.md), named from the replayed World's
    // models; with --verify they must be the ones the replay emitted (the world hash checks
    // them as well).
    const std::span<const sim::AnimationEvent> recorded = rec.events_at(step.tick);
    if (p.verify) {
      const std::span<const sim::AnimationEvent> replayed = replayer.world().last_tick_events();
      const auto same = [](const sim::AnimationEvent& a, const sim::AnimationEvent& b) {
        return a.entity == b.entity && a.clip == b.clip && a.marker == b.marker && a.layer == b.layer;
      };
      if (!std::equal(recorded.begin(), recorded.end(), replayed.begin(), replayed.end(), same)) {
        hashes.close();
        return fail("tick " + std::to_string(step.tick) + ": the replay's animation events differ from the recording's (" +
                        std::to_string(replayed.size()) + " against " + std::to_string(recorded.size()) + ")",
                    kExitFailure);
      }
    }
    if (p.events) {
      for (const sim::AnimationEvent& e : recorded) std::printf("%s\n", event_line(replayer.world(), e).c_str());
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  hashes.close();
  const double rate = seconds > 0 ? static_cast<double>(played) / seconds : 0.0;
  std::printf("replayed ticks %" PRIu64 "..%" PRIu64 " (%" PRIu64 " ticks) in %.3f s: %.0f ticks/s, %.1fx real time, %zu entities\n",
              p.from, p.to, played, seconds, rate, rate / p.tick_rate_hz, replayer.world().entity_count());
  if (p.verify) std::printf("verify: all %" PRIu64 " ticks match the recording\n", played);
  std::printf("final_world_hash %s\n", hash_hex(replayer.world().world_hash()).c_str());
  return damaged ? kExitFailure : kExitOk;
}

int replay(const ReplayArgs& args) {
  const std::string& path = args.path;
  Playback playback;
  playback.speed = args.speed;
  playback.verify = args.verify;
  playback.events = args.events;

  Result<std::shared_ptr<const replay::Recording>> read = replay::read_recording_file(path);
  if (!read) return fail(read.error().message, kExitFailure);
  const replay::Recording& rec = *read.value();
  playback.tick_rate_hz = rec.header.tick_rate_hz;
  const bool damaged = print_recording_summary(path, rec);
  if (rec.ticks.empty()) {
    std::printf("nothing to replay: the recording holds no tick\n");
    return damaged ? kExitFailure : kExitOk;
  }

  const fs::path dir = fs::path(path).parent_path();
  const std::string& assets = args.assets;
  replay::ModelLoader loader = [&](const std::string& source) -> Result<std::shared_ptr<const Model>> {
    Result<Model> model = rig::load_model_source(rig::locate_model_source(source, dir, assets));
    if (!model) return model.error();
    return std::make_shared<const Model>(std::move(model.value()));
  };
  replay::ReplayOptions options;
  options.threads = args.threads;
  Result<std::unique_ptr<replay::Replayer>> created = replay::Replayer::create(read.value(), loader, options);
  if (!created) return fail(path + ": " + created.error().message, kExitFailure);

  const uint64_t last = rec.end_tick() - 1;
  const uint64_t from = args.from.value_or(rec.first_tick());
  const uint64_t to = args.to.value_or(last);
  if (from < rec.first_tick() || from > last || to < from || to > last) {
    return print_usage_error("posecast replay", "--from/--to must satisfy " + std::to_string(rec.first_tick()) +
                                                    " <= from <= to <= " + std::to_string(last));
  }
  playback.from = from;
  playback.to = to;

  HashesFile hashes;
  if (!args.hashes.empty() && !hashes.open(args.hashes)) return fail("cannot write '" + args.hashes + "'", kExitFailure);
  return play(*created.value(), rec, playback, rec.first_tick(), hashes, damaged);
}

}  // namespace

Command add_replay_command(CommandLine& command_line) {
  CLI::App* app = command_line.add_command(
      "replay", "re-simulate a recording bit-exactly: --verify, seek (--from/--to), --speed",
      "Re-simulates a recording from its commands, bit-exactly (docs/recording-format.md). With\n"
      "--verify a progress bar appears on stderr when stderr is a terminal and the work is long.\n"
      "A truncated tail is a warning (exit 0); a divergence, a damaged file or an asset mismatch\n"
      "exits 1.");
  auto o = std::make_shared<ReplayArgs>();
  app->add_option("FILE", o->path, "the recording (.pcrec)")->required();
  app->add_flag("--verify", o->verify,
                "compare every tick's tick check (and world hash, when recorded) with the\n"
                "recording; at the first divergence print tick, entity, joint and size of\n"
                "the difference, exit 1");
  app->add_option("--from", o->from, "first tick to play (seeks: nearest checkpoint, then re-simulation)")
      ->type_name("T")
      ->check(integer_in(0, 1ULL << 40));
  app->add_option("--to", o->to, "last tick to play (default: the last recorded tick)")
      ->type_name("T")
      ->check(integer_in(0, 1ULL << 40));
  app->add_option("--speed", o->speed, "pace playback at X times real time (0: as fast as possible)")
      ->type_name("X")
      ->check(number_in(0, 1e6));
  app->add_option("--hashes", o->hashes,
                  "one line per played tick: the tick, then every entity's palette hash\n"
                  "(id order, 16 hex digits), as `posecast run --hashes` writes")
      ->type_name("OUT");
  add_threads_option(*app, o->threads);
  app->add_option("--assets", o->assets, "look for model files by name in DIR first (for moved recordings)")
      ->type_name("DIR");
  app->add_flag("--events", o->events,
                "print the recording's animation events of every played tick (docs/events.md):\n"
                "\"event tick T entity E clip C marker M layer L weight W\"");
  return {app, [o] { return replay(*o); }};
}

}  // namespace posecast::cli
