// Server + NetClients over real loopback UDP, driven in simulated time.

#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

#include "loopback_session.h"
#include "netclient_support.h"
#include "posecast/client/pose_blend.h"
#include "posecast/hash.h"
#include "posecast/local_to_model.h"

namespace posecast::client {
namespace {

using testing::LoopbackSession;
using testing::SessionSetup;

constexpr uint32_t kSnapshotIntervalTicks = 3;  // 20 Hz snapshots at 60 Hz ticks

// Worst virtual-vertex error (model units) of `test` against `exact`.
class PoseErrorMeter {
 public:
  PoseErrorMeter(const Skeleton& skeleton, const protocol::PoseFormat& format)
      : skeleton_(skeleton), scale_(format.error_scale), exact_models_(skeleton.node_count()),
        test_models_(skeleton.node_count()) {}
  float error(std::span<const Transform> exact, std::span<const Transform> test) {
    EXPECT_TRUE((LocalToModelJob{&skeleton_, exact, exact_models_}.Run()));
    EXPECT_TRUE((LocalToModelJob{&skeleton_, test, test_models_}.Run()));
    return protocol::measure_pose_error(skeleton_, scale_, exact_models_, test_models_).error;
  }
  float bound() const { return scale_.bound; }

 private:
  const Skeleton& skeleton_;
  protocol::ErrorScale scale_;
  std::vector<glm::mat4> exact_models_;
  std::vector<glm::mat4> test_models_;
};

// Checks every decoded record a client holds against the server's quantised palette.
struct BitExactChecker {
  uint64_t compared = 0;
  uint64_t mismatched = 0;
  std::vector<uint32_t> checked_until;  // per client: newest tick already checked

  void check(LoopbackSession& session) {
    checked_until.resize(session.clients().size(), 0);
    for (std::size_t c = 0; c < session.clients().size(); ++c) {
      const SnapshotBuffer& buffer = session.clients()[c]->buffer();
      uint32_t newest = checked_until[c];
      for (std::size_t v = 0; v < buffer.size(); ++v) {
        const SnapshotView& view = buffer.view_at(v);
        if (view.tick <= checked_until[c] || !view.complete) continue;
        newest = std::max(newest, view.tick);
        for (const ViewEntry& e : view.entries) {
          if (!e.decoded) continue;
          const PoseSample* sample = buffer.sample(view.tick, e.entity_id, e.generation);
          const std::vector<glm::mat4>* truth = session.server_palette(view.tick, e.entity_id);
          ++compared;
          if (sample == nullptr || truth == nullptr || !testing::same_bits(sample->palette(), *truth)) {
            ++mismatched;
          }
        }
      }
      checked_until[c] = newest;
    }
  }
};

class IntegrationTest : public ::testing::Test {};

// The issue's main scenario: 8 clients under 10 % loss, 50 +- 20 ms latency and reordering.
// Clients 0-3 evaluate the server's clip recipes at the render time (the default), clients
// 4-7 interpolate poses (PresentSettings::evaluate_recipes off): the same conditions, both ways.
TEST_F(IntegrationTest, EightLossyClientsDecodeServerPalettesBitForBitAndShowTheServersPoseWithoutPops) {
  SessionSetup setup;
  setup.capture_exact = true;
  LoopbackSession session(setup);
  ASSERT_TRUE(session.ok());
  session.run_until(200'000);  // entities spawned and playing
  constexpr std::size_t kRecipeClients = 4;
  for (uint64_t i = 0; i < 8; ++i) {
    NetClientOptions o = session.client_options(1000 + i);
    o.simulator = testing::lossy_link(100 + i);
    o.present.evaluate_recipes = i < kRecipeClients;
    session.add_client(std::move(o));
  }
  BitExactChecker bits;
  PoseErrorMeter meter(session.skeleton(), session.format());

  // Per frame: what each client shows against the server's pose at the render time (its
  // clip state at the tick before r advanced to r: LoopbackSession::server_pose_at).
  struct Frame {
    std::size_t client;
    uint32_t before, after;  // neighbour ticks (after == 0: none)
    PresentMode mode;
    bool correcting;
    bool from_recipe;
    float error;  // against the server pose at the render time
    float codec_error;  // against the same interpolation of the server's exact neighbour poses
    float step_excess;  // how much further the shown pose moved since the last frame than the server pose did
  };
  struct Previous {
    std::vector<Transform> shown, reference;
  };
  std::map<std::pair<std::size_t, uint32_t>, Previous> previous;
  std::vector<Frame> frames;
  std::vector<std::set<uint32_t>> received(8);
  std::vector<Transform> reference(session.skeleton().node_count());
  std::vector<Transform> at_tick(session.skeleton().node_count());
  std::vector<Transform> codec_reference(session.skeleton().node_count());
  std::size_t reference_checks = 0, reference_mismatches = 0, no_reference = 0;
  const int64_t measure_from = 4'000'000;
  session.run_until(10'000'000, [&] {
    if (session.now() % 1'000'000 < 4'000) bits.check(session);
    for (std::size_t c = 0; c < session.clients().size(); ++c) {
      NetClient& client = *session.clients()[c];
      const SnapshotBuffer& buffer = client.buffer();
      for (std::size_t v = 0; v < buffer.size(); ++v) received[c].insert(buffer.view_at(v).tick);
      if (session.now() < measure_from) continue;
      const int64_t r = client.render_time_us();
      const uint32_t k0 = static_cast<uint32_t>(r * 60 / 1'000'000);
      for (const PresentedEntity& e : client.entities()) {
        if (!session.server_pose_at(e.id, r, reference)) {
          ++no_reference;
          continue;
        }
        // The reference is the server's evaluation: at the tick's start, its exact pose bit for bit.
        if (frames.size() % 16 == 0) {
          const std::vector<Transform>* exact = session.exact_pose(k0, e.id);
          ++reference_checks;
          if (exact == nullptr || !session.server_pose_at(e.id, session.tick_time(k0), at_tick) ||
              std::memcmp(exact->data(), at_tick.data(), at_tick.size() * sizeof(Transform)) != 0) {
            ++reference_mismatches;
          }
        }
        const SampleWindow w = buffer.window(e.id, e.generation, r);
        Frame f{c, w.before ? w.before.tick : 0, w.after ? w.after.tick : 0, e.mode, e.correcting,
                e.from_recipe, meter.error(reference, e.locals), -1.0f, 0.0f};
        Previous& prev = previous[{c, e.id}];
        if (!prev.shown.empty()) {
          f.step_excess = meter.error(prev.shown, e.locals) - meter.error(prev.reference, reference);
        }
        prev.shown.assign(e.locals.begin(), e.locals.end());
        prev.reference = reference;
        if (e.mode == PresentMode::kInterpolate && !e.from_recipe && w.before && w.after) {
          const std::vector<Transform>* b0 = session.exact_pose(w.before.tick, e.id);
          const std::vector<Transform>* b1 = session.exact_pose(w.after.tick, e.id);
          if (b0 != nullptr && b1 != nullptr && !e.correcting) {
            const float tt = static_cast<float>(static_cast<double>(r - w.before.time_us) /
                                                static_cast<double>(w.after.time_us - w.before.time_us));
            interpolate_locals(*b0, *b1, tt, RotationBlend::kSlerp, codec_reference);
            f.codec_error = meter.error(codec_reference, e.locals);
          }
        }
        frames.push_back(f);
      }
    }
  });
  bits.check(session);

  // Bit-exact palettes for every record received.
  EXPECT_GT(bits.compared, 8u * 6u * 100u);
  EXPECT_EQ(bits.mismatched, 0u);
  // The reference is sound: the server's own evaluation at ticks.
  EXPECT_GT(reference_checks, 1'000u);
  EXPECT_EQ(reference_mismatches, 0u);
  EXPECT_EQ(no_reference, 0u);  // every entity plays a plain clip all along

  // Classify frames by the gap around them: snapshots lost between `before` and the next one
  // the client received. Clean: interpolation between consecutive snapshots, no fade running.
  enum Kind { kClean, kGap, kLonger };
  const auto kind_of = [&](const Frame& f) {
    const bool is_clean = f.mode == PresentMode::kInterpolate && !f.correcting && f.after == f.before + kSnapshotIntervalTicks;
    if (is_clean) return kClean;
    auto next = received[f.client].upper_bound(f.before);
    const uint32_t next_tick = next == received[f.client].end() ? f.before + 100 * kSnapshotIntervalTicks : *next;
    const uint32_t lost = (next_tick - f.before) / kSnapshotIntervalTicks - 1;
    return lost <= 3 ? kGap : kLonger;
  };
  const float bound = meter.bound();
  struct Group {
    std::vector<float> error[3], step[3];
    float worst_codec = 0;
    std::size_t recipe_frames = 0, clean_fallbacks = 0;
  };
  Group groups[2];  // 0: pose interpolation, 1: render-time recipes
  for (const Frame& f : frames) {
    Group& g = groups[f.client < kRecipeClients ? 1 : 0];
    const Kind k = kind_of(f);
    g.error[k].push_back(f.error / bound);
    g.step[k].push_back(f.step_excess / bound);
    if (k == kClean) g.worst_codec = std::max(g.worst_codec, f.codec_error);
    g.recipe_frames += f.from_recipe ? 1 : 0;
    if (k == kClean && f.client < kRecipeClients && !f.from_recipe) ++g.clean_fallbacks;
  }
  const auto quantile = [](std::vector<float> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return static_cast<double>(v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))]);
  };
  const char* kind_names[3] = {"clean", "gap <= 3 lost", "longer gap"};
  std::printf("bound %.6f model units; errors against the server's pose at the render time, x bound\n",
              static_cast<double>(bound));
  for (int gi = 0; gi < 2; ++gi) {
    const Group& g = groups[gi];
    std::printf("%s (%zu frames from recipes):\n", gi == 1 ? "render-time recipes" : "pose interpolation", g.recipe_frames);
    for (int k = 0; k < 3; ++k) {
      std::printf("  %-14s %6zu frames: error p50 %.3g p90 %.3g p99 %.3g p99.9 %.3g max %.3g; step excess p99 %.3g max %.3g\n",
                  kind_names[k], g.error[k].size(), quantile(g.error[k], 0.5), quantile(g.error[k], 0.9),
                  quantile(g.error[k], 0.99), quantile(g.error[k], 0.999), quantile(g.error[k], 1.0),
                  quantile(g.step[k], 0.99), quantile(g.step[k], 1.0));
    }
  }
  std::printf("pose interpolation, clean: worst %.2fx vs the interpolated exact neighbours; recipe clients' clean frames not from recipes: %zu\n",
              static_cast<double>(groups[0].worst_codec / bound), groups[1].clean_fallbacks);
  for (std::size_t c = 0; c < session.clients().size(); ++c) {
    const ClientStats s = session.clients()[c]->stats(session.now());
    std::printf("client %zu: rtt %.1f ms loss %.1f%% jitter %.1f ms delay %.1f (target %.1f, cover %d) depth %zu in %.0f B/s out %.0f B/s decoded %llu missing_ref %llu unknown %llu corrections %llu\n",
                c, s.rtt_ms, s.loss_percent, s.jitter_ms, s.delay_ms, s.target_delay_ms, s.loss_cover, s.buffer_depth,
                s.bytes_in_per_s, s.bytes_out_per_s, static_cast<unsigned long long>(s.records_decoded),
                static_cast<unsigned long long>(s.missing_reference), static_cast<unsigned long long>(s.unknown_entity),
                static_cast<unsigned long long>(s.corrections));
    EXPECT_TRUE(session.clients()[c]->connected());
    EXPECT_EQ(s.decode_errors, 0u);
  }
  const Group& interp = groups[0];
  const Group& recipes = groups[1];
  // Pose interpolation between two received neighbours adds no error beyond the codec's: the
  // shown pose is within the codec bound of the same interpolation of the server's exact poses
  // (against the server's pose at the render time, 20 Hz interpolation of this fast motion is
  // off by hundreds of bounds: printed above).
  EXPECT_GT(interp.error[kClean].size(), 10'000u);
  EXPECT_LE(interp.worst_codec, bound);
  // No pop with pose interpolation: during gaps of up to 3 lost snapshots (extrapolation, then
  // the fade back), the shown pose never moves from one frame to the next by more than 3x the
  // largest step that plain interpolation between neighbours takes beyond the server's motion.
  EXPECT_GT(interp.error[kGap].size(), 1'000u);
  EXPECT_LE(quantile(interp.step[kGap], 1.0), 3.0 * quantile(interp.step[kClean], 1.0));
  // The issue's target with render-time recipes: within the codec bound of the server's pose
  // at the render time between snapshots, within 10x the bound during gaps of up to 3 lost
  // snapshots.
  EXPECT_GT(recipes.error[kClean].size(), 10'000u);
  // Every record here is a plain clip: (almost) every clean frame has recipes on both sides
  // (a record the encoder coded without its dictionary is unverified and falls back).
  EXPECT_LE(recipes.clean_fallbacks, recipes.error[kClean].size() / 100);
  EXPECT_LE(quantile(recipes.error[kClean], 1.0), 1.0);
  EXPECT_GT(recipes.error[kGap].size(), 1'000u);
  EXPECT_LE(quantile(recipes.error[kGap], 1.0), 10.0);
}

// Commands under the same conditions: every 400 ms one entity gets a crossfade (250 ms; every
// other one interrupted 100 ms in by a second crossfade, which fades from a frozen pose, and
// every fourth of those interrupted again 60 ms later and then a third time 50 ms after that:
// rapid successive commands), a speed change, a cut to a two-clip blend, or new blend weights.
// Render-time recipes derive the server's pose across commands, crossfade starts and ends
// (steady_us, speeds, fade state), and through fades from a frozen pose (the frozen chain: the
// interrupted fades at fixed clip times under the new target): within the codec bound on
// clean frames and 10x in gaps of up to 3 lost snapshots, on every frame.
TEST_F(IntegrationTest, WithCommandsAndCrossfadesRecipesHoldTheBoundOnEveryFrameIncludingFadesFromAFrozenPose) {
  SessionSetup setup;
  setup.capture_exact = true;
  LoopbackSession session(setup);
  ASSERT_TRUE(session.ok());
  session.run_until(200'000);
  constexpr std::size_t kRecipeClients = 2;
  for (uint64_t i = 0; i < 4; ++i) {
    NetClientOptions o = session.client_options(2000 + i);
    o.simulator = testing::lossy_link(200 + i);
    o.present.evaluate_recipes = i < kRecipeClients;
    session.add_client(std::move(o));
  }
  PoseErrorMeter meter(session.skeleton(), session.format());
  BitExactChecker bits;  // the server vouches for its recipes: decoded palettes must be its own
  std::set<uint32_t> command_ticks;
  uint64_t commands = 0;
  struct Interrupt {
    int64_t at_us;
    sim::EntityId id;
    uint16_t clip;
  };
  std::vector<Interrupt> interrupts;  // pending, in time order
  uint64_t interrupted = 0, nested_interrupts = 0;
  const auto interrupt_crossfades = [&] {
    while (!interrupts.empty() && session.now() >= interrupts.front().at_us) {
      const Interrupt next = interrupts.front();
      interrupts.erase(interrupts.begin());
      command_ticks.insert(static_cast<uint32_t>(session.server().world().tick_index()));
      session.mark_command_tick();
      sim::MotionSpec spec;
      spec.clips[0].clip = next.clip;
      session.server().crossfade(next.id, 0, spec, 200'000, true);
      ++interrupted;
    }
  };
  const auto issue_command = [&] {
    const uint64_t n = commands++;
    const sim::EntityId id = session.entities()[n % session.entities().size()];
    command_ticks.insert(static_cast<uint32_t>(session.server().world().tick_index()));
    session.mark_command_tick();
    sim::MotionSpec spec;
    switch (n % 4) {
      case 0:
        spec.clips[0].clip = static_cast<uint16_t>(1 + n % 2);
        session.server().crossfade(id, 0, spec, 250'000, true);
        // Every other crossfade is interrupted 100 ms in by another (which fades from the pose
        // frozen then), every fourth twice more in quick succession (fades from a frozen fade).
        if ((n / 4) % 2 == 1) interrupts.push_back({session.now() + 100'000, id, 0});
        if ((n / 4) % 4 == 3) {
          interrupts.push_back({session.now() + 160'000, id, 2});
          interrupts.push_back({session.now() + 210'000, id, 1});
          nested_interrupts += 2;
        }
        break;
      case 1:
        session.server().set_speed(id, 0, static_cast<sim::SpeedQ16>((3 + (n / 4) % 4) * (1 << 16) / 4));  // 0.75x..1.5x
        break;
      case 2:
        spec.count = 2;
        spec.clips[0].clip = 1;
        spec.clips[0].weight = 0.6f;
        spec.clips[1].clip = 2;
        spec.clips[1].weight = 0.4f;
        session.server().play(id, 0, spec);
        break;
      default: {
        const float weights[2] = {0.3f, 0.7f};
        session.server().set_blend_weights(id, 0, weights);
        break;
      }
    }
  };

  struct Frame {
    std::size_t client;
    uint32_t before, after;  // neighbour ticks (after == 0: none)
    PresentMode mode;
    bool from_recipe, correcting, command_between, state_reference;
    RecipeMiss miss;
    bool near_fallback;  // a recipe miss at this frame or within the convergence time before it
    bool frozen_fade;    // the server fades from a frozen pose at the render time
    float error, step_excess;
  };
  struct Previous {
    std::vector<Transform> shown, reference;
  };
  std::map<std::pair<std::size_t, uint32_t>, Previous> previous;
  std::vector<Frame> frames;
  std::vector<std::set<uint32_t>> received(4);
  std::vector<Transform> reference(session.skeleton().node_count());
  std::size_t no_reference = 0;
  std::size_t frozen_reference_checks = 0, frozen_reference_mismatches = 0;
  std::set<std::pair<uint32_t, uint32_t>> frozen_checked;  // (tick, entity)
  std::vector<Transform> at_tick(session.skeleton().node_count());
  std::map<std::pair<std::size_t, uint32_t>, int64_t> last_miss_us;
  session.run_until(10'000'000, [&] {
    if (session.now() >= 1'000'000 && session.now() % 400'000 < 4'000) issue_command();
    interrupt_crossfades();
    if (session.now() % 1'000'000 < 4'000) bits.check(session);
    for (std::size_t c = 0; c < session.clients().size(); ++c) {
      const SnapshotBuffer& buffer = session.clients()[c]->buffer();
      for (std::size_t v = 0; v < buffer.size(); ++v) received[c].insert(buffer.view_at(v).tick);
    }
    if (session.now() < 4'000'000) return;
    for (std::size_t c = 0; c < session.clients().size(); ++c) {
      NetClient& client = *session.clients()[c];
      const int64_t r = client.render_time_us();
      const uint32_t k0 = static_cast<uint32_t>(r * 60 / 1'000'000);
      for (const PresentedEntity& e : client.entities()) {
        // The server's pose at r: its layer state at the tick before r advanced to r (plain
        // motions, crossfades from a motion or from a frozen pose), else (no captured state:
        // a command tick whose state could not be rewound) its exact poses at the ticks around
        // r interpolated (approximate).
        const bool state_reference = session.server_pose_at(e.id, r, reference);
        const bool frozen_fade = session.frozen_fade_at(e.id, r);
        // A fade from a frozen pose is referenced by evaluating the crossfade it froze: at the
        // tick's start that must be the World's own pose bit for bit.
        if (frozen_fade && state_reference && frozen_checked.insert({k0, e.id}).second) {
          const std::vector<Transform>* exact = session.exact_pose(k0, e.id);
          if (exact != nullptr && session.server_pose_at(e.id, session.tick_time(k0), at_tick)) {
            ++frozen_reference_checks;
            if (std::memcmp(exact->data(), at_tick.data(), at_tick.size() * sizeof(Transform)) != 0) {
              ++frozen_reference_mismatches;
            }
          }
        }
        if (!state_reference) {
          const std::vector<Transform>* e0 = session.exact_pose(k0, e.id);
          const std::vector<Transform>* e1 = session.exact_pose(k0 + 1, e.id);
          if (e0 == nullptr || e1 == nullptr) {
            ++no_reference;
            continue;
          }
          const float t = static_cast<float>(static_cast<double>(r - session.tick_time(k0)) /
                                             static_cast<double>(session.tick_time(k0 + 1) - session.tick_time(k0)));
          interpolate_locals(*e0, *e1, t, RotationBlend::kSlerp, reference);
        }
        const SampleWindow w = client.buffer().window(e.id, e.generation, r);
        // The ticks the shown pose derives from: its neighbours, or the newest two when extrapolating.
        const uint32_t from = w.after ? w.before.tick : (w.previous ? w.previous.tick : w.before.tick);
        const uint32_t to = w.after ? w.after.tick : std::max(k0 + 1, w.before.tick);
        auto cmd = command_ticks.upper_bound(from);
        if (e.recipe_miss != RecipeMiss::kNone) last_miss_us[{c, e.id}] = r;
        auto miss = last_miss_us.find({c, e.id});
        const bool near_fallback = miss != last_miss_us.end() && r - miss->second <= 100'000;
        Frame f{c, w.before ? w.before.tick : 0, w.after ? w.after.tick : 0, e.mode, e.from_recipe, e.correcting,
                cmd != command_ticks.end() && *cmd <= to, state_reference, e.recipe_miss, near_fallback,
                frozen_fade, meter.error(reference, e.locals), 0.0f};
        Previous& prev = previous[{c, e.id}];
        if (!prev.shown.empty()) {
          f.step_excess = meter.error(prev.shown, e.locals) - meter.error(prev.reference, reference);
        }
        prev.shown.assign(e.locals.begin(), e.locals.end());
        prev.reference = reference;
        frames.push_back(f);
      }
    }
  });
  bits.check(session);
  // Every record decoded (frozen-crossfade records among them) is the server's quantised pose.
  EXPECT_GT(bits.compared, 4u * 6u * 100u);
  EXPECT_EQ(bits.mismatched, 0u);
  const float bound = meter.bound();
  // The issue's classes (as in the main test): clean = interpolation between consecutive
  // snapshots with no fade running; gap = snapshots lost after `before`, at most 3; longer.
  enum Kind { kClean, kGap, kLonger };
  const auto kind_of = [&](const Frame& f) {
    if (f.mode == PresentMode::kInterpolate && !f.correcting && f.after == f.before + kSnapshotIntervalTicks) return kClean;
    auto next = received[f.client].upper_bound(f.before);
    const uint32_t next_tick = next == received[f.client].end() ? f.before + 100 * kSnapshotIntervalTicks : *next;
    const uint32_t lost = (next_tick - f.before) / kSnapshotIntervalTicks - 1;
    return lost <= 3 ? kGap : kLonger;
  };
  // Recipe clients' frames against a state reference, by kind: [kind][0] every frame,
  // [kind][1] those with a command between their neighbours, [kind][2] those during a fade
  // from a frozen pose, [kind][3] frames at or within the convergence time after a recipe miss
  // (pose interpolation, and the fade back from it), [kind][4] those with no command between
  // their neighbours. Pose-interpolation clients: interp[kind].
  // Frames against the interpolated exact poses (no captured state): approx.
  constexpr int kGroups = 5;
  std::vector<float> error[3][kGroups], step[3][kGroups], interp[3], interp_step[3], approx;
  std::size_t misses[4] = {0, 0, 0, 0}, clean_misses[4] = {0, 0, 0, 0}, recipe_frames = 0;
  for (const Frame& f : frames) {
    const Kind k = kind_of(f);
    if (f.client >= kRecipeClients) {
      interp[k].push_back(f.error / bound);
      interp_step[k].push_back(f.step_excess / bound);
      continue;
    }
    recipe_frames += f.from_recipe ? 1 : 0;
    ++misses[static_cast<std::size_t>(f.miss)];
    if (k == kClean) ++clean_misses[static_cast<std::size_t>(f.miss)];
    if (!f.state_reference) {
      approx.push_back(f.error / bound);
      continue;
    }
    const bool in_group[kGroups] = {true, f.command_between, f.frozen_fade, f.near_fallback, !f.command_between};
    for (int group = 0; group < kGroups; ++group) {
      if (!in_group[group]) continue;
      error[k][group].push_back(f.error / bound);
      step[k][group].push_back(f.step_excess / bound);
    }
  }
  const auto quantile = [](std::vector<float> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return static_cast<double>(v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))]);
  };
  const auto print = [&](const char* name, const std::vector<float>& e, const std::vector<float>& st) {
    std::printf("  %-50s %6zu frames: error p50 %.3g p90 %.3g p99 %.3g p99.9 %.3g max %.3g; step excess p99 %.3g max %.3g\n",
                name, e.size(), quantile(e, 0.5), quantile(e, 0.9), quantile(e, 0.99), quantile(e, 0.999),
                quantile(e, 1.0), quantile(st, 0.99), quantile(st, 1.0));
  };
  std::printf("%llu commands, %llu interrupting crossfades (%llu of a fade from a frozen pose); errors against the server's pose at the render time, x bound:\n",
              static_cast<unsigned long long>(commands), static_cast<unsigned long long>(interrupted),
              static_cast<unsigned long long>(nested_interrupts));
  const char* kind_names[3] = {"clean", "gap <= 3 lost", "longer gap"};
  const char* group_names[kGroups] = {"", ", command between", ", fade from a frozen pose", ", near a fallback",
                                     ", no command between"};
  char name[128];
  for (int k = 0; k < 3; ++k) {
    for (int group = 0; group < kGroups; ++group) {
      std::snprintf(name, sizeof name, "recipe clients, %s%s", kind_names[k], group_names[group]);
      print(name, error[k][group], step[k][group]);
    }
  }
  print("recipe clients, no captured state (approx. reference)", approx, {});
  for (int k = 0; k < 3; ++k) {
    std::snprintf(name, sizeof name, "pose-interpolation clients, %s", kind_names[k]);
    print(name, interp[k], interp_step[k]);
  }
  std::printf("recipe clients: %zu frames from recipes; frames not from one: no recipe %zu, unverified %zu, "
              "not derivable %zu (clean frames: %zu, %zu, %zu); no reference %zu; frozen-fade references "
              "checked against the World's pose at ticks: %zu (%zu differ); records compared bit for bit: %llu (%llu differ)\n",
              recipe_frames, misses[1], misses[2], misses[3], clean_misses[1], clean_misses[2], clean_misses[3],
              no_reference, frozen_reference_checks, frozen_reference_mismatches,
              static_cast<unsigned long long>(bits.compared), static_cast<unsigned long long>(bits.mismatched));
  EXPECT_GE(commands, 20u);
  EXPECT_GE(nested_interrupts, 2u);
  EXPECT_LT(no_reference, frames.size() / 50);  // a fade ending on a command tick has no state
  // The reference for fades from a frozen pose is sound: the World's pose at ticks, bit for bit.
  EXPECT_GT(frozen_reference_checks, 10u);
  EXPECT_EQ(frozen_reference_mismatches, 0u);
  // Every recipe client's frame is measured against the server's exact state at r.
  EXPECT_EQ(approx.size(), 0u);
  // The issue's target on every frame, commands, crossfades from a motion and fades from a
  // frozen pose included: within the codec bound on clean frames, within 10x during gaps of up
  // to 3 lost snapshots when no command fell into the gap. A command whose snapshots were lost
  // cannot be shown before one arrives: those frames are held to the pose-interpolation
  // clients' worst error in gaps instead.
  EXPECT_GT(error[kClean][0].size(), 10'000u);
  EXPECT_GT(error[kClean][1].size(), 500u);
  EXPECT_GT(error[kClean][2].size(), 50u);  // 3 interruptions: about 200 frames in all
  EXPECT_LE(quantile(error[kClean][0], 1.0), 1.0);
  EXPECT_GT(error[kGap][0].size(), 500u);
  EXPECT_GT(error[kGap][2].size(), 20u);
  EXPECT_GT(error[kGap][4].size(), 500u);
  EXPECT_LE(quantile(error[kGap][4], 1.0), 10.0);
  EXPECT_LE(quantile(error[kGap][1], 1.0), quantile(interp[kGap], 1.0));
  // Every clean frame is the server's recipe: nothing missing, unverified or refused (fades
  // from a frozen pose carry recipes too).
  EXPECT_EQ(clean_misses[static_cast<std::size_t>(RecipeMiss::kNoRecipe)], 0u);
  EXPECT_EQ(clean_misses[static_cast<std::size_t>(RecipeMiss::kUnverified)], 0u);
  EXPECT_EQ(clean_misses[static_cast<std::size_t>(RecipeMiss::kNotDerivable)], 0u);
  // No pop: the largest frame-to-frame step beyond the server's own motion is no larger than
  // the pose-interpolation clients', on frames with no command between their neighbours (the
  // frame that shows a command missed in a gap steps to it).
  double recipe_step = 0;
  for (int k = 0; k < 3; ++k) recipe_step = std::max(recipe_step, quantile(step[k][4], 1.0));
  double interp_worst = 0;
  for (int k = 0; k < 3; ++k) interp_worst = std::max(interp_worst, quantile(interp_step[k], 1.0));
  EXPECT_LE(recipe_step, interp_worst);
  for (auto& c : session.clients()) EXPECT_EQ(c->stats(session.now()).decode_errors, 0u);
}

}  // namespace
}  // namespace posecast::client

namespace posecast::client {
namespace {

TEST_F(IntegrationTest, LateJoinerShowsTheServersPoseWithinOneSendInterval) {
  LoopbackSession session(SessionSetup{});
  ASSERT_TRUE(session.ok());
  session.run_until(2'000'000);  // the world has been running for two seconds
  NetClient& late = session.add_client(session.client_options(7));
  int64_t connected_at = -1;
  int64_t shown_at = -1;
  std::size_t exact = 0;
  session.run_until(3'000'000, [&] {
    if (connected_at < 0 && late.connected()) connected_at = session.now();
    if (connected_at < 0 || shown_at >= 0) return;
    if (late.entities().size() < session.entities().size()) return;
    shown_at = session.now();
    // What it shows is the server's quantised pose of the tick it received, bit for bit.
    for (const PresentedEntity& e : late.entities()) {
      const SampleWindow w = late.buffer().window(e.id, e.generation, late.render_time_us());
      const SampleRef& shown = w.before ? w.before : w.after;
      const std::vector<glm::mat4>* truth = session.server_palette(shown.tick, e.id);
      if (truth != nullptr && testing::same_bits(e.palette, *truth)) ++exact;
    }
  });
  ASSERT_GE(connected_at, 0);
  ASSERT_GE(shown_at, 0) << "nothing shown within a second";
  // One send interval, plus the client frame in which the snapshot is read.
  EXPECT_LE(shown_at - connected_at, 50'000 + 4'000);
  EXPECT_EQ(exact, session.entities().size());
}

TEST_F(IntegrationTest, CommandForAnUnownedEntityIsRefusedAndForAnOwnedOneApplied) {
  LoopbackSession session(SessionSetup{});
  ASSERT_TRUE(session.ok());
  NetClient& client = session.add_client(session.client_options(9));
  session.run_until(500'000);
  ASSERT_TRUE(client.connected());
  const uint32_t target = session.entities()[0];
  const ClientEntity* known = client.registry().find(target);
  ASSERT_NE(known, nullptr);
  protocol::ClientCommand command;
  command.entity_id = target;
  command.generation = known->generation;
  command.op = protocol::CommandOp::kSetSpeed;
  command.value = 2 << 16;
  const auto drops = [&](server::DropReason r) {
    return session.server().metrics().drops[static_cast<std::size_t>(r)];
  };
  ASSERT_NE(client.send_command(command, session.now()), 0u);
  session.run_until(800'000);
  EXPECT_GE(drops(server::DropReason::kUnownedCommand), 1u);
  EXPECT_EQ(session.server().metrics().commands_applied, 0u);

  EXPECT_FALSE(client.owns(target));
  EXPECT_FALSE(client.session_status().is_replay());

  session.server().grant_ownership(client.client_id(), target);
  session.run_until(900'000);
  // The SessionStatus that follows the grant (with the next snapshot) tells the client.
  EXPECT_TRUE(client.owns(target));
  EXPECT_EQ(client.session_status().owned, std::vector<uint32_t>{target});
  ASSERT_NE(client.send_command(command, session.now()), 0u);
  session.run_until(1'200'000);
  EXPECT_EQ(session.server().metrics().commands_applied, 1u);  // the redundant copies are stale
  EXPECT_GE(drops(server::DropReason::kStaleCommand), 2u);

  session.server().revoke_ownership(target);
  session.run_until(1'400'000);
  EXPECT_FALSE(client.owns(target));

  // A live server has no replay to control: the control is dropped and counted.
  const uint64_t unexpected = drops(server::DropReason::kUnexpected);
  ASSERT_NE(client.send_replay_control(protocol::ReplayControl{0, protocol::ReplayAction::kPause, 0, 0, 0}, session.now()), 0u);
  session.run_until(1'600'000);
  EXPECT_GE(drops(server::DropReason::kUnexpected), unexpected + 1);
}

// What a victim client received in one run: every decoded record's palette hash in order,
// and its datagram counts.
struct VictimTrace {
  std::vector<uint64_t> records;  // (tick, entity, palette hash) folded
  uint64_t datagrams_in = 0;
  uint64_t bytes_in = 0;
  bool connected = false;
  std::array<uint64_t, server::kDropReasonCount> drops{};
};

// Hostile traffic from another socket: random bytes, truncated and oversized datagrams, wrong
// versions, undersized hellos, forged responses (replayed challenge, wrong address), and
// connected-only messages (acks, commands, disconnects) from an address with no connection.
class Attacker {
 public:
  Attacker(asio::io_context& io, net::Endpoint server) : socket_(io), relay_(io), server_(server) {
    EXPECT_TRUE(socket_.open(net::Endpoint(asio::ip::make_address_v4("127.0.0.1"), 0)).ok());
    EXPECT_TRUE(relay_.open(net::Endpoint(asio::ip::make_address_v4("127.0.0.1"), 0)).ok());
  }

  void attack(uint64_t round) {
    std::vector<uint8_t> bytes;
    switch (round % 9) {
      case 0: {  // random bytes
        bytes.resize(1 + next() % 1400);
        for (uint8_t& b : bytes) b = static_cast<uint8_t>(next());
        break;
      }
      case 1:  // truncated hello
        bytes = padded_hello(protocol::kProtocolVersion);
        bytes.resize(1 + next() % (bytes.size() - 1));
        break;
      case 2:  // oversized
        bytes = padded_hello(protocol::kProtocolVersion);
        bytes.resize(1500, 0);
        break;
      case 3:  // another protocol version
        bytes = padded_hello(protocol::kProtocolVersion + 1);
        break;
      case 4:  // a hello smaller than its challenge (amplification attempt)
        bytes = encode(protocol::ClientHello{0, 0, ""});  // every field at its default: smallest
        break;
      case 5: {  // a real challenge, answered from another address (spoofed/replayed)
        send(socket_, padded_hello(protocol::kProtocolVersion));
        std::array<std::byte, 2048> in;
        net::Endpoint from;
        const std::size_t n = socket_.receive_from(in, from);
        Result<protocol::Message> m =
            protocol::decode_message({reinterpret_cast<const uint8_t*>(in.data()), n});
        if (m && std::holds_alternative<protocol::ServerChallenge>(m.value())) {
          const auto& c = std::get<protocol::ServerChallenge>(m.value());
          send(relay_, encode(protocol::ChallengeResponse{c.client_nonce, c.challenge_token}));
        }
        return;
      }
      case 6:  // a response with a guessed token
        bytes = encode(protocol::ChallengeResponse{next(), next()});
        break;
      case 7: {  // connected-only traffic from an address with no connection (forged client)
        const uint64_t kind = next() % 3;
        if (kind == 0) bytes = encode(protocol::Ack{static_cast<uint32_t>(next()), 0xFFFFFFFFu});
        if (kind == 1) {
          protocol::ClientCommand c;
          c.sequence = static_cast<uint32_t>(next());
          c.entity_id = 1'000'000;
          c.op = protocol::CommandOp::kSetSpeed;
          bytes = encode(c);
        }
        if (kind == 2) bytes = encode(protocol::Disconnect{protocol::DisconnectReason::kClientLeft, "forged"});
        break;
      }
      default:  // server-bound messages the server never accepts
        bytes = encode(protocol::Welcome{});
        break;
    }
    send(socket_, bytes);
    drain();
  }

 private:
  uint64_t next() {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    return state_ >> 17;
  }
  static std::vector<uint8_t> encode(const protocol::Message& m) {
    Result<std::vector<uint8_t>> bytes = protocol::encode_message(m);
    return bytes ? std::move(bytes).value() : std::vector<uint8_t>{};
  }
  std::vector<uint8_t> padded_hello(uint16_t version) {
    std::vector<uint8_t> b = encode(protocol::ClientHello{version, next(), "attacker"});
    b.resize(std::max<std::size_t>(b.size(), 96), 0);
    return b;
  }
  void send(net::UdpTransport& from, std::span<const uint8_t> bytes) {
    if (bytes.empty()) return;
    (void)from.send_to({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, server_);
  }
  void drain() {
    std::array<std::byte, 2048> in;
    net::Endpoint from;
    while (socket_.receive_from(in, from) > 0 || relay_.receive_from(in, from) > 0) {
    }
  }

  net::UdpTransport socket_;
  net::UdpTransport relay_;
  net::Endpoint server_;
  uint64_t state_ = 99;
};

VictimTrace run_victim(bool hostile) {
  VictimTrace trace;
  SessionSetup setup;
  LoopbackSession session(setup);
  if (!session.ok()) return trace;
  session.run_until(200'000);
  NetClientOptions options = session.client_options(5);
  options.simulator = testing::lossy_link(5);  // the victim's own link is impaired too
  NetClient& victim = session.add_client(std::move(options));
  Attacker attacker(session.io(), session.server().local_endpoint());
  uint32_t checked_until = 0;
  uint64_t round = 0;
  auto collect = [&] {
    const SnapshotBuffer& buffer = victim.buffer();
    uint32_t newest = checked_until;
    for (std::size_t v = 0; v < buffer.size(); ++v) {
      const SnapshotView& view = buffer.view_at(v);
      if (view.tick <= checked_until || !view.complete) continue;
      newest = std::max(newest, view.tick);
      for (const ViewEntry& e : view.entries) {
        const PoseSample* s = buffer.sample(view.tick, e.entity_id, e.generation);
        trace.records.push_back((uint64_t{view.tick} << 40) ^ (uint64_t{e.entity_id} << 8) ^
                                (s != nullptr ? hash_palette(s->palette()) : 0));
      }
    }
    checked_until = newest;
  };
  session.run_until(4'000'000, [&] {
    if (hostile) {
      for (int i = 0; i < 3; ++i) attacker.attack(round++);
    }
    if (session.now() % 500'000 < 4'000) collect();
  });
  collect();
  const ClientStats s = victim.stats(session.now());
  trace.datagrams_in = s.datagrams_in;
  trace.bytes_in = s.bytes_in;
  trace.connected = victim.connected();
  trace.drops = session.server().metrics().drops;
  return trace;
}

TEST_F(IntegrationTest, HostileDatagramsAreDroppedAndCountedAndDoNotChangeWhatAClientReceives) {
  const VictimTrace quiet = run_victim(false);
  const VictimTrace attacked = run_victim(true);
  ASSERT_TRUE(quiet.connected);
  EXPECT_TRUE(attacked.connected);
  EXPECT_GT(quiet.records.size(), 100u);
  // Bit for bit the same stream: same datagrams, same decoded palettes at the same ticks.
  EXPECT_EQ(attacked.datagrams_in, quiet.datagrams_in);
  EXPECT_EQ(attacked.bytes_in, quiet.bytes_in);
  EXPECT_EQ(attacked.records, quiet.records);
  using server::DropReason;
  std::vector<DropReason> expected{DropReason::kMalformed,     DropReason::kOversized,
                                   DropReason::kProtocolMismatch, DropReason::kBadChallenge,
                                   DropReason::kUnknownSource, DropReason::kUnexpected};
  // An undersized hello exists only if the smallest hello is smaller than a challenge.
  const std::size_t smallest_hello = protocol::encode_message(protocol::ClientHello{0, 0, ""})->size();
  const std::size_t challenge =
      protocol::encode_message(protocol::ServerChallenge{~uint64_t{0}, ~uint64_t{0}})->size();
  if (smallest_hello < challenge) expected.push_back(DropReason::kHelloTooSmall);
  for (DropReason r : expected) {
    EXPECT_EQ(quiet.drops[static_cast<std::size_t>(r)], 0u) << server::to_string(r);
    EXPECT_GT(attacked.drops[static_cast<std::size_t>(r)], 0u) << server::to_string(r);
  }
}

TEST_F(IntegrationTest, WithoutLossTheDelayStaysWithinTwoSendIntervalsPlusJitter) {
  LoopbackSession session(SessionSetup{});
  ASSERT_TRUE(session.ok());
  NetClientOptions jittery = session.client_options(21);
  net::SimulatorConfig link;
  link.seed = 21;
  link.inbound.latency_us = 50'000;
  link.inbound.jitter_us = 20'000;
  link.outbound = link.inbound;
  jittery.simulator = link;
  NetClient& a = session.add_client(std::move(jittery));
  NetClient& b = session.add_client(session.client_options(22));  // plain loopback
  double worst_excess_ms = -1e9;
  double a_delay = 0, a_jitter = 0, b_delay = 0, b_jitter = 0;
  // The bound below holds trivially for a client with no delay at all: every sample must come
  // from connected clients whose delay is positive.
  int samples = 0, connected_with_delay = 0;
  session.run_until(6'000'000, [&] {
    if (session.now() < 3'000'000) return;
    for (NetClient* c : {&a, &b}) {
      const ClientStats s = c->stats(session.now());
      ++samples;
      connected_with_delay += c->connected() && s.delay_ms > 0.0;
      worst_excess_ms = std::max(worst_excess_ms, s.delay_ms - (2 * 50.0 + s.jitter_ms));
    }
    const ClientStats sa = a.stats(session.now());
    const ClientStats sb = b.stats(session.now());
    a_delay = std::max(a_delay, sa.delay_ms);
    a_jitter = sa.jitter_ms;
    b_delay = std::max(b_delay, sb.delay_ms);
    b_jitter = sb.jitter_ms;
  });
  std::printf("50 +- 20 ms link: delay up to %.1f ms, jitter %.1f ms; plain loopback: delay up to %.1f ms, jitter %.1f ms\n",
              a_delay, a_jitter, b_delay, b_jitter);
  ASSERT_GT(samples, 0);
  EXPECT_EQ(connected_with_delay, samples);
  EXPECT_LE(worst_excess_ms, 0.0);
  EXPECT_EQ(a.stats(session.now()).loss_cover, 0);
  EXPECT_EQ(b.stats(session.now()).loss_cover, 0);
}

// RTT from the server's echo of the client's acks: over a link of 30 ms each way,
// the round trip less the server's hold. The sample still counts the ack's wait for the
// server's next poll (up to a tick in this harness, where the server reads its socket when it
// ticks) and the client's for its next frame, but not the wait for the server's next send (up
// to 50 ms), which an estimate from the ack of a baseline carries (100 ms here).
TEST_F(IntegrationTest, RoundTripTimeIsTheLinksOwnWithinAPollOfEachSide) {
  SessionSetup setup;
  setup.entities = 2;
  LoopbackSession session(setup);
  ASSERT_TRUE(session.ok());
  NetClientOptions options = session.client_options(23);
  net::SimulatorConfig link;
  link.inbound.latency_us = 30'000;
  link.outbound = link.inbound;
  options.simulator = link;
  NetClient& client = session.add_client(std::move(options));
  session.run_until(3'000'000);
  ASSERT_TRUE(client.connected());
  const double rtt_ms = client.stats(session.now()).rtt_ms;
  const double tick_ms = 1000.0 / 60.0, frame_ms = static_cast<double>(setup.frame_us) / 1000.0;
  std::printf("rtt over 30 ms each way: %.1f ms\n", rtt_ms);
  EXPECT_GE(rtt_ms, 60.0);
  EXPECT_LE(rtt_ms, 60.0 + tick_ms + frame_ms);
}

// The motion-to-photon target of the snapshot stream (prediction off: with it on, the owner
// sees its command at once, prediction_test.cpp): a command from the owning client is visible
// in its own view within one tick + one send interval + the interpolation delay. The command
// freezes a walking entity (speed 0); it is visible from the first frame whose palette the next
// frame repeats (to rounding; before the freeze reaches the render time, every frame moves).
// Simulated time, so the figure is the pipeline's, not the machine's.
TEST_F(IntegrationTest, OwnedCommandIsVisibleWithinOneTickOneSendIntervalAndTheDelay) {
  SessionSetup setup;
  setup.frame_us = 2'000;
  LoopbackSession session(setup);
  ASSERT_TRUE(session.ok());
  NetClientOptions options = session.client_options(31);
  options.prediction.enabled = false;
  NetClient& client = session.add_client(options);
  session.run_until(1'000'000);
  ASSERT_TRUE(client.connected());
  const uint32_t target = session.entities()[0];
  session.server().grant_ownership(client.client_id(), target);
  session.run_until(1'300'000);
  ASSERT_TRUE(client.owns(target));

  const PresentedEntity* shown = client.find(target);
  ASSERT_NE(shown, nullptr);
  protocol::ClientCommand freeze;
  freeze.entity_id = target;
  freeze.generation = shown->generation;
  freeze.op = protocol::CommandOp::kSetSpeed;
  freeze.value = 0;
  const int64_t sent_us = session.now();
  const double delay_ms = client.stats(sent_us).delay_ms;
  ASSERT_NE(client.send_command(freeze, sent_us), 0u);

  std::vector<glm::mat4> previous;
  int64_t previous_us = 0;
  int64_t visible_us = -1;
  session.run_until(sent_us + 1'000'000, [&] {
    const PresentedEntity* e = client.find(target);
    if (e == nullptr || visible_us >= 0) return;
    std::vector<glm::mat4> now(e->palette.begin(), e->palette.end());
    // Interpolating between two equal snapshots may still round differently in the last bits:
    // "still" is a change far below one frame of walking (about 1e-3 of the rig's size).
    float change = 0.0f;
    for (std::size_t j = 0; j < now.size() && !previous.empty(); ++j) {
      for (int c = 0; c < 4; ++c) change = std::max(change, glm::length(now[j][c] - previous[j][c]));
    }
    if (!previous.empty() && change < 1e-5f) visible_us = previous_us;
    previous = std::move(now);
    previous_us = session.now();
  });
  ASSERT_GE(visible_us, 0) << "the entity never stopped moving in the client's view";
  const double tick_ms = 1000.0 / 60.0;
  const double send_interval_ms = 1000.0 / 20.0;
  const double budget_ms = tick_ms + send_interval_ms + delay_ms;
  const double latency_ms = static_cast<double>(visible_us - sent_us) / 1000.0;
  std::printf("motion-to-photon: %.1f ms (budget %.1f ms = tick %.1f + send interval %.1f + delay %.1f), frames every %.0f ms\n",
              latency_ms, budget_ms, tick_ms, send_interval_ms, delay_ms, static_cast<double>(setup.frame_us) / 1000.0);
  EXPECT_LE(latency_ms, budget_ms + static_cast<double>(setup.frame_us) / 1000.0);
  // And not sooner than the render time can reach the command's tick: the measurement is sound.
  EXPECT_GE(latency_ms, delay_ms - static_cast<double>(setup.frame_us) / 1000.0);
}

// Deferred exact records across a change of record kind: entities play clips (every
// record exact: the client keeps its recipe and shows the render-time recipe), then one gets a
// second override layer (no recipe: its records are coded against references, so the client
// computes the deferred references they name), then the layer goes (recipes again). No
// record fails, and at the end every decoded pose in the buffer, deferred ones computed now,
// gives the server's quantised palette bit for bit.
TEST_F(IntegrationTest, DeferredExactRecordsServeAsReferencesWhenAnEntityLosesItsRecipe) {
  SessionSetup setup;
  setup.entities = 4;
  LoopbackSession session(setup);
  ASSERT_TRUE(session.ok());
  NetClient& client = session.add_client(session.client_options(41));
  session.run_until(1'500'000);
  ASSERT_TRUE(client.connected());
  const sim::EntityId layered = session.entities()[0];
  sim::MotionSpec other;
  other.clips[0].clip = 2;  // run over walk
  session.server().play(layered, 1, other);
  session.server().set_layer_weight(layered, 1, 0.5f);
  session.run_until(2'500'000);
  session.server().set_layer_weight(layered, 1, 0.0f);
  session.run_until(3'500'000);
  const ClientStats stats = client.stats(session.now());
  EXPECT_EQ(stats.decode_errors, 0u);
  EXPECT_EQ(stats.missing_reference, 0u);
  EXPECT_GT(stats.records_decoded, 4u * 50);

  // Before anything asks for them, the records of the entities that kept their recipes are
  // still deferred (shown from recipes, never needed as references).
  const SnapshotBuffer& buffer = client.buffer();
  std::size_t deferred = 0, without_recipe = 0;
  for (std::size_t v = 0; v < buffer.size(); ++v) {
    const SnapshotView& view = buffer.view_at(v);
    for (const ViewEntry& e : view.entries) {
      const PoseSample* sample = buffer.sample(view.tick, e.entity_id, e.generation);
      if (sample == nullptr || !e.decoded) continue;
      deferred += sample->pending != nullptr;
      without_recipe += e.entity_id == layered && sample->quantized.recipe.count == 0;
    }
  }
  EXPECT_GT(deferred, 3u * 40) << "exact records are kept as recipes";
  EXPECT_GT(without_recipe, 10u) << "the layered entity's records carried no recipe";
  BitExactChecker checker;
  checker.check(session);
  EXPECT_GT(checker.compared, 4u * 50);
  EXPECT_EQ(checker.mismatched, 0u);
  std::printf("deferred records before the check: %zu; layered records without a recipe: %zu; "
              "compared %llu\n", deferred, without_recipe,
              static_cast<unsigned long long>(checker.compared));
}

}  // namespace
}  // namespace posecast::client
