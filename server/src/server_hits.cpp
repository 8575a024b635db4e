// Server: lag-compensated hit queries (docs/hit-queries.md): the history and query stages,
// the embedder's call, and a client's right and rate.

#include <algorithm>

#include "server_impl.h"

namespace posecast::server {

static_assert(kHitRefusalCount == protocol::kHitRefusalCount, "the wire carries every refusal");

const char* to_string(HitRefusal refusal) { return protocol::hit_refusal_name(static_cast<uint8_t>(refusal)); }

Status Server::Impl::open_hits() {
  if (options.hit_history_us == 0) return {};
  // Ticks covering hit_history_us, and the tick it starts in.
  const int64_t ticks = (options.hit_history_us * options.tick_rate_hz + 999'999) / 1'000'000 + 1;
  hit_history = std::make_unique<HitHistory>(*world, formats, static_cast<uint32_t>(ticks), options.tick_rate_hz);
  Result<std::unique_ptr<HitQuery>> query = HitQuery::create(formats, HitRigOptions{});
  if (!query.ok()) return Error{"server: " + query.error().message};
  hit_query = std::move(query).value();
  counters.hit_history_bytes_per_entity = hit_history->bytes_per_entity();
  return {};
}

HitResult Server::Impl::answer_hit(HitRay ray, int64_t view_us, uint32_t as_client) {
  HitResult result;
  if (check_ray(ray, options.hit_max_ray_length) != RayCheck::kOk) {
    result.refusal = HitRefusal::kBadRay;
  } else if (!hit_history || hit_history->newest_tick() == protocol::kNoTick) {
    result.refusal = HitRefusal::kDisabled;
  }
  if (result.refusal != HitRefusal::kNone) {
    ++counters.hit_refused[static_cast<std::size_t>(result.refusal)];
    return result;
  }
  SnapshotGrid grid;
  if (const ClientReplica* replica = as_client != 0 ? replicator->find(as_client) : nullptr) {
    grid = SnapshotGrid{replica->send_interval_ticks, replica->send_phase};
  }
  const HitAnswer answer = hit_query->run(*hit_history, ray, view_us, grid);
  ++counters.hit_queries;
  counters.hit_hits += answer.hit ? 1 : 0;
  counters.hit_view_clamped += answer.clamped ? 1 : 0;
  counters.hit_unevaluable += answer.unevaluable;
  result.hit = answer.hit;
  result.entity = answer.entity;
  result.joint = answer.joint;
  result.distance = answer.distance;
  result.view_us = answer.view_us;
  result.clamped = answer.clamped;
  return result;
}

// The embedder's word for this client, else the policy. kOwners scans the mirror's records (a
// query is rate-limited and costs far more than the scan).
bool Server::Impl::may_fire(uint32_t client, const HitShooter& shooter) const {
  if (shooter.allowed) return *shooter.allowed;
  switch (options.hit_right) {
    case HitRight::kNone: return false;
    case HitRight::kAll: return true;
    case HitRight::kOwners:
      return std::any_of(mirror->records().begin(), mirror->records().end(),
                         [client](const EntityRecord& e) { return e.owner == client; });
  }
  return false;
}

HitResult Server::Impl::client_hit(uint32_t client, HitRay ray, int64_t view_us, int64_t now_us) {
  HitResult refused;
  // Only connected clients fire (the entry goes when the client leaves).
  HitShooter& shooter = shooters[client];
  if (!may_fire(client, shooter)) {
    refused.refusal = HitRefusal::kNoRight;
  } else {
    if (now_us - shooter.window_start_us >= 1'000'000) shooter.window_start_us = now_us, shooter.fired = 0;
    if (shooter.fired >= options.hit_queries_per_second) refused.refusal = HitRefusal::kRateLimited;
    ++shooter.fired;
  }
  if (refused.refusal != HitRefusal::kNone) {
    ++counters.hit_refused[static_cast<std::size_t>(refused.refusal)];
    return refused;
  }
  return answer_hit(ray, view_us, client);
}

protocol::HitResult Server::Impl::on_hit_query(ClientConnection& client, const protocol::HitQuery& query,
                                              int64_t now_us) {
  const HitRay ray{{query.origin_x, query.origin_y, query.origin_z},
                   {query.direction_x, query.direction_y, query.direction_z},
                   query.length};
  const HitResult result = client_hit(client.id, ray, query.view_us, now_us);
  protocol::HitResult answer;
  answer.sequence = query.sequence;
  answer.outcome = result.refusal != HitRefusal::kNone ? protocol::HitOutcome::kRefused
                   : result.hit                         ? protocol::HitOutcome::kHit
                                                        : protocol::HitOutcome::kMiss;
  answer.refusal = static_cast<uint8_t>(result.refusal);
  answer.entity_id = result.entity;
  answer.joint = result.joint;
  answer.distance = result.distance;
  answer.view_us = result.view_us;
  answer.clamped = result.clamped;
  return answer;
}

HitResult Server::hit_query(HitRay ray, int64_t view_us, uint32_t as_client) {
  return impl_->answer_hit(ray, view_us, as_client);
}

void Server::allow_hit_queries(uint32_t client_id, bool allowed) { impl_->queue(OpHitRight{client_id, allowed}); }

const HitRig* Server::hit_rig(sim::ModelId model, uint16_t rig) const {
  if (!impl_->hit_query || model >= impl_->formats.format_of.size() || rig >= impl_->formats.format_of[model].size()) {
    return nullptr;
  }
  return &impl_->hit_query->hit_rig(impl_->formats.index(model, rig));
}

}  // namespace posecast::server
