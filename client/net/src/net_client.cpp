#include "posecast/client/net_client.h"

#include <utility>

namespace posecast::client {

NetClient::NetClient(asio::io_context& io, NetClientOptions options)
    : presenter_(static_cast<const PresenterSettings&>(options)),
      connection_(io, static_cast<ConnectionOptions&&>(std::move(options)), presenter_) {}

void NetClient::update(int64_t now_us) {
  connection_.update(now_us);
  if (connection_.connected()) presenter_.present(now_us);
}

ClientStats NetClient::stats(int64_t now_us) const {
  ClientStats s;
  static_cast<ConnectionStats&>(s) = connection_.stats(now_us);
  static_cast<PresenterStats&>(s) = presenter_.stats(now_us);
  return s;
}

}  // namespace posecast::client
