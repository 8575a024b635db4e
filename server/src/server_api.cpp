// The embedding API (server.h): calls from any thread are queued and applied at the next tick
// boundary, in call order. Animator commands (set_position's teleport among them) go to the
// World before the tick; everything that names an entity by its server record (ownership) or a
// client is applied after the tick's entity sync, so a spawn and a grant queued together both
// take effect.

#include <algorithm>

#include "server_impl.h"

namespace posecast::server {

void Server::Impl::queue(ApiOp op) {
  std::lock_guard lock(api_mutex);
  api_ops.push_back(std::move(op));
}

sim::EntityId Server::spawn(sim::ModelId model, uint16_t rig, Vec3 position) {
  const sim::EntityId id = impl_->next_api_id.fetch_add(1);
  sim::SpawnCommand spawn{model, rig, {}};
  spawn.at.x = position.x;
  spawn.at.z = position.z;
  impl_->queue(sim::Command{0, id, spawn});
  return id;
}

void Server::despawn(sim::EntityId id) { impl_->queue(sim::Command{0, id, sim::DespawnCommand{}}); }

void Server::play(sim::EntityId id, uint8_t layer, const sim::MotionSpec& motion) {
  impl_->queue(sim::Command{0, id, sim::PlayCommand{layer, motion}});
}

void Server::crossfade(sim::EntityId id, uint8_t layer, const sim::MotionSpec& motion,
                       int64_t duration_us, bool sync_phase) {
  impl_->queue(sim::Command{0, id, sim::CrossfadeCommand{layer, motion, duration_us, sync_phase}});
}

void Server::set_layer_weight(sim::EntityId id, uint8_t layer, float weight) {
  impl_->queue(sim::Command{0, id, sim::SetLayerWeightCommand{layer, weight}});
}

void Server::set_blend_weights(sim::EntityId id, uint8_t layer, std::span<const float> weights) {
  sim::SetBlendWeightsCommand command;
  command.layer = layer;
  command.count = static_cast<uint8_t>(std::min<std::size_t>(weights.size(), sim::kMaxBlendClips + 1));
  for (std::size_t i = 0; i < weights.size() && i < command.weights.size(); ++i) command.weights[i] = weights[i];
  impl_->queue(sim::Command{0, id, command});
}

void Server::set_speed(sim::EntityId id, uint8_t layer, sim::SpeedQ16 speed) {
  impl_->queue(sim::Command{0, id, sim::SetSpeedCommand{layer, speed}});
}

void Server::submit(sim::Command command) { impl_->queue(std::move(command)); }
void Server::set_position(sim::EntityId id, Vec3 position) { impl_->queue(OpSetPosition{id, position}); }
void Server::grant_ownership(uint32_t client_id, sim::EntityId id) { impl_->queue(OpGrant{client_id, id}); }
void Server::revoke_ownership(sim::EntityId id) { impl_->queue(OpRevoke{id}); }
void Server::set_interest(uint32_t client_id, Interest interest) {
  impl_->queue(OpInterest{client_id, std::make_shared<Interest>(std::move(interest))});
}
void Server::set_client_bandwidth(uint32_t client_id, uint32_t kbit) { impl_->queue(OpBandwidth{client_id, kbit}); }
void Server::set_client_send_rate(uint32_t client_id, uint32_t hz) { impl_->queue(OpSendRate{client_id, hz}); }
void Server::kick(uint32_t client_id, std::string reason) { impl_->queue(OpKick{client_id, std::move(reason)}); }
void Server::refuse_new_clients(protocol::DisconnectReason reason, std::string message) {
  impl_->queue(OpAdmission{protocol::Disconnect{reason, std::move(message)}});
}
void Server::accept_new_clients() { impl_->queue(OpAdmission{std::nullopt}); }

void Server::on_client_connected(std::function<void(const ClientInfo&)> callback) {
  impl_->connected_callback = std::move(callback);
}
void Server::on_client_disconnected(
    std::function<void(const ClientInfo&, protocol::DisconnectReason)> callback) {
  impl_->disconnected_callback = std::move(callback);
}
void Server::on_replay_control(
    std::function<void(const ClientInfo&, const protocol::ReplayControl&)> callback) {
  impl_->replay_control_callback = std::move(callback);
}
void Server::set_replay_status(uint32_t first_tick, uint32_t last_tick, uint32_t tick, int32_t speed_q16) {
  impl_->replicator->set_replay_status(first_tick, last_tick, tick, speed_q16);
}
void Server::on_pose_quantized(std::function<void(uint32_t, sim::EntityId, uint16_t,
                                                  const protocol::QuantizedPose&)> callback) {
  impl_->mirror->on_pose_quantized(std::move(callback));
}

void Server::Impl::apply_api_ops() {
  {
    std::lock_guard lock(api_mutex);
    api_ops_taken.swap(api_ops);
  }
  const uint64_t next_tick = world->tick_index();
  for (ApiOp& op : api_ops_taken) {
    if (auto* command = std::get_if<sim::Command>(&op)) {
      command->tick = next_tick;
      world->submit(kApiSubmitter, std::move(*command));
    } else if (auto* p = std::get_if<OpSetPosition>(&op)) {
      // A teleport that keeps the facing the entity has now (0 for one spawned this tick).
      const sim::EntityState* state = world->find_entity(p->id);
      const float yaw = state != nullptr ? state->root.yaw : 0.0f;
      world->submit(kApiSubmitter, sim::Command{next_tick, p->id, sim::TeleportCommand{p->position.x, p->position.z, yaw}});
    }
  }
}

void Server::Impl::apply_entity_ops(int64_t now_us) {
  for (ApiOp& op : api_ops_taken) {
    if (auto* g = std::get_if<OpGrant>(&op)) {
      mirror->set_owner(g->id, g->client);
    } else if (auto* r = std::get_if<OpRevoke>(&op)) {
      mirror->set_owner(r->id, 0);
    } else if (auto* in = std::get_if<OpInterest>(&op)) {
      if (ClientReplica* c = replicator->find(in->client)) replicator->set_interest(*c, std::move(*in->interest));
    } else if (auto* b = std::get_if<OpBandwidth>(&op)) {
      if (ClientReplica* c = replicator->find(b->client)) c->bandwidth_kbit = b->kbit;
    } else if (auto* s = std::get_if<OpSendRate>(&op)) {
      if (ClientReplica* c = replicator->find(s->client)) replicator->set_send_rate(*c, s->hz);
    } else if (auto* h = std::get_if<OpHitRight>(&op)) {
      // Only for a connected client (its entry goes when it leaves).
      if (connections->find(h->client) != nullptr) shooters[h->client].allowed = h->allowed;
    } else if (auto* a = std::get_if<OpAdmission>(&op)) {
      connections->set_refusal(std::move(a->refusal));
    } else if (auto* k = std::get_if<OpKick>(&op)) {
      if (ClientConnection* c = connections->find(k->client)) {
        ++counters.kicks;
        connections->disconnect(connections->index_of(*c), protocol::DisconnectReason::kKicked, k->reason,
                                now_us, true);
      }
    }
  }
  api_ops_taken.clear();
}

}  // namespace posecast::server
