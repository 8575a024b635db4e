#include "posecast/client/net_client.h"

#include <utility>

namespace posecast::client {

NetClient::NetClient(asio::io_context& io, NetClientOptions options)
    : presenter_(static_cast<const PresenterSettings&>(options)),
      connection_(io, static_cast<ConnectionOptions&&>(std::move(options)), presenter_) {}

void NetClient::update(int64_t now_us) {
  connection_.update(now_us);
  if (!connection_.connected()) return;
  presenter_.present(now_us);
  Predictor& predictor = presenter_.predictor();
  if (!predictor.enabled()) return;
  predictor.retain_owned([this](uint32_t id) { return connection_.owns(id); });
  if (const int64_t present = connection_.prediction_time_us(now_us); present >= 0) {
    presenter_.present_predicted(present, now_us);
  }
}

ClientStats NetClient::stats(int64_t now_us) const {
  ClientStats s;
  static_cast<ConnectionStats&>(s) = connection_.stats(now_us);
  static_cast<PresenterStats&>(s) = presenter_.stats(now_us);
  static_cast<PredictionStats&>(s) = presenter_.predictor().stats();
  return s;
}

}  // namespace posecast::client
