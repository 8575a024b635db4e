// Lag compensation agrees with what the client showed (issue #35 point 4, docs/hit-queries.md):
// a walking, turning crowd served over real loopback UDP with simulated latency on both sides; every
// frame the test fires rays at what the client presents, answers each on the presented pose
// (the client's locals and root, the same capsules) and asks the server at the client's render
// time as that client saw it (Server::hit_query's as_client: between the ticks it was sent),
// and counts disagreements by kind. Both sides hold the same bits (the held roots the records
// carried, the recipes evaluated by the same jobs, one root interpolation), so every answer
// agrees exactly: entity, joint and distance to the bit.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "loopback_session.h"
#include "posecast/client/presented_hits.h"
#include "posecast/hit_geometry.h"

namespace posecast::client::testing {
namespace {

TEST(HitAgreement, TenThousandRaysAtAWalkingCrowdUnderLatency) {
  SessionSetup setup;
  setup.model_source = "gen-rig:24:travel";
  setup.entities = 24;
  net::SimulatorConfig server_link;
  server_link.seed = 7;
  server_link.outbound.latency_us = 30'000;
  server_link.outbound.jitter_us = 5'000;
  server_link.inbound.latency_us = 30'000;
  setup.server.simulator = server_link;
  LoopbackSession session(setup);
  ASSERT_TRUE(session.ok());
  NetClientOptions options = session.client_options(77);
  net::SimulatorConfig client_link;
  client_link.seed = 8;
  client_link.outbound.latency_us = 20'000;
  client_link.inbound.latency_us = 20'000;
  client_link.inbound.jitter_us = 5'000;
  options.simulator = client_link;
  NetClient& client = session.add_client(options);
  // Each entity is steered (Move: locomotion crossfades in, then a phase-synced walk/run blend
  // whose root moves and turns at its own rate). The crossfade at the start guards a history
  // slot's stale recipe fields: a plain blend recorded over a slot that last held a crossfade
  // must not keep its source block (that made about 22 % of these rays disagree).
  for (std::size_t i = 0; i < session.entities().size(); ++i) {
    session.server().submit(sim::Command{0, session.entities()[i],
                                         sim::MoveCommand{1.0f, 0.2f * static_cast<float>(i % 5) - 0.4f}});
  }
  session.run_until(1'500'000);
  ASSERT_TRUE(client.connected());
  const HitRig* rig = session.server().hit_rig(0, 0);
  ASSERT_NE(rig, nullptr);

  PresentedHitQuery presented;  // the ray on the presented pose (its locals and root, the same capsules)
  std::mt19937 rng(35);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  int fired = 0, hits = 0, disagree = 0, hit_miss = 0, other_target = 0, distance_off = 0;
  int from_interpolation = 0;  // disagreements where an involved entity was not shown from a recipe
  int bit_exact = 0;           // hits on both sides at the same distance, bit for bit
  int between_snapshots = 0;   // rays fired at a frame that showed some entity interpolated
  float worst_distance = 0.0f;
  const int kRays = 10'000, kPerFrame = 40;
  session.run_until(session.now() + 4'000'000, [&] {
    if (fired >= kRays || client.entities().empty()) return;
    const int64_t view = client.render_time_us();
    bool interpolated = false;
    for (const PresentedEntity& e : client.entities()) interpolated |= e.mode == PresentMode::kInterpolate;
    for (int k = 0; k < kPerFrame && fired < kRays; ++k, ++fired) {
      const PresentedEntity& target = client.entities()[rng() % client.entities().size()];
      const glm::vec3 aim(target.root.x + 0.3f * unit(rng), 0.9f + 0.7f * unit(rng), target.root.z + 0.3f * unit(rng));
      const glm::vec3 from = aim + glm::vec3(8.0f * unit(rng), 1.0f + unit(rng), 8.0f * unit(rng));
      // The ray as a client sends it (unnormalised); each side normalises those floats once
      // (check_ray). A ray normalised twice differs in its last bits, and a ray grazing a
      // capsule turns that into another joint or millimetres along the ray.
      const HitRay sent{from, aim - from, 30.0f};
      HitRay ray = sent;
      ASSERT_EQ(check_ray(ray, 1000.0f), RayCheck::kOk);
      const PresentedHit seen = presented.run(client.entities(), ray, [&](const PresentedEntity&) { return rig; });
      const server::HitResult served = session.server().hit_query(sent, view, client.client_id());
      ASSERT_EQ(served.refusal, server::HitRefusal::kNone);
      hits += seen.hit ? 1 : 0;
      between_snapshots += interpolated ? 1 : 0;
      bool differs = false;
      if (seen.hit != served.hit) {
        ++hit_miss, differs = true;
      } else if (seen.hit && (seen.entity != served.entity || seen.joint != served.joint)) {
        ++other_target, differs = true;
      } else if (seen.hit) {
        const float off = std::fabs(seen.distance - served.distance);
        worst_distance = std::max(worst_distance, off);
        if (off > 1e-3f) ++distance_off, differs = true;
        bit_exact += seen.distance == served.distance ? 1 : 0;
      }
      if (!differs) continue;
      ++disagree;
      for (uint32_t id : {seen.entity, served.entity}) {
        const PresentedEntity* e = client.find(id);
        if (e != nullptr && !e->from_recipe) {
          ++from_interpolation;
          break;
        }
      }
    }
  });
  std::printf("rays %d (%d at frames between snapshots), client hits %d (%d at the same distance bit for bit), "
              "disagreements %d (hit/miss %d, other joint or entity %d, distance > 1 mm %d; %d with a pose not shown "
              "from a recipe); worst distance gap %.6f\n",
              fired, between_snapshots, hits, bit_exact, disagree, hit_miss, other_target, distance_off,
              from_interpolation, static_cast<double>(worst_distance));
  ASSERT_EQ(fired, kRays);
  EXPECT_GT(hits, kRays / 4);  // the rays are aimed: most meet someone
  EXPECT_GT(between_snapshots, kRays / 2);  // the frames are mostly derived between two snapshots
  // The server rewinds to what this client was shown (docs/hit-queries.md): the held roots its
  // records carried, interpolated by the client's own function between the ticks it was sent,
  // and the recipes between them evaluated by the same jobs. Nothing is left to differ here.
  // What the design still accepts does not occur in this run and would show up as disagreements:
  // a client extrapolating past its newest snapshot or fading out a root correction (a lost or
  // late snapshot), and poses shown without a recipe (extra layers, masks).
  EXPECT_EQ(disagree, 0);
  EXPECT_EQ(bit_exact, hits);
  EXPECT_EQ(worst_distance, 0.0f);
}

}  // namespace
}  // namespace posecast::client::testing
