#pragma once
// --grant N: gives each connecting client ownership of up to N entities nobody owns (lowest
// ids first) and releases them when the client leaves, so a viewer can command them
// (docs/server.md). Tick thread only: hook on_connected/on_disconnected to the Server's
// callbacks, which run there.

#include <cstdint>
#include <map>

#include "posecast/server/server.h"

namespace posecast::server {

class OwnershipGranter {
 public:
  // `server` must outlive the granter. per_client 0 grants nothing.
  OwnershipGranter(Server& server, uint32_t per_client) : server_(server), per_client_(per_client) {}

  void on_connected(const ClientInfo& client);
  void on_disconnected(const ClientInfo& client);

  // True when some connected client was granted `id` (the scenario then leaves it alone).
  bool owned(sim::EntityId id) const { return owner_.count(id) != 0; }

 private:
  Server& server_;
  uint32_t per_client_;
  std::map<sim::EntityId, uint32_t> owner_;  // granted entity -> client id
};

}  // namespace posecast::server
