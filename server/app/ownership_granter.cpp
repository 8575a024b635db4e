#include "ownership_granter.h"

#include <spdlog/spdlog.h>

namespace posecast::server {

void OwnershipGranter::on_connected(const ClientInfo& client) {
  const sim::World& world = server_.world();
  uint32_t granted = 0;
  for (std::size_t i = 0; i < world.entity_count() && granted < per_client_; ++i) {
    const sim::EntityId id = world.entity_id_at(i);
    if (owned(id)) continue;
    server_.grant_ownership(client.id, id);
    owner_[id] = client.id;
    ++granted;
    spdlog::info("client {} ({}) owns entity {}", client.id, client.name, id);
  }
  if (granted < per_client_) {
    spdlog::info("client {}: {} of {} entities granted (no more unowned entities)", client.id,
                 granted, per_client_);
  }
}

void OwnershipGranter::on_disconnected(const ClientInfo& client) {
  // The server already cleared its owner fields; forget the grants here too.
  std::erase_if(owner_, [&](const auto& entry) { return entry.second == client.id; });
}

}  // namespace posecast::server
