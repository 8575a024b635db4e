#pragma once
// The models a client holds, and the binding of a server's asset manifest (Welcome::assets)
// to them by content hash (docs/session.md, "Connecting", step 4).
//
// Each model gets one PoseFormat per rig, derived from the rig's skeleton and clips exactly as
// the server derives it (protocol::build_pose_format with default options), so decoded poses
// and their palettes match the server's bit for bit. Not thread-safe: share one library only
// between clients driven by the same thread.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "posecast/model.h"
#include "posecast/protocol/clip_dictionary.h"
#include "posecast/protocol/messages.h"
#include "posecast/protocol/pose_format.h"
#include "posecast/result.h"

namespace posecast::client {

// One local model with the wire format of each of its rigs, and the clip dictionary that
// decodes records the server predicted from the rig's clips (pose_codec.h). The dictionaries
// hold scratch buffers: use them from the thread that drives the clients only.
struct ClientModel {
  std::shared_ptr<const Model> model;
  std::vector<std::shared_ptr<const protocol::PoseFormat>> formats;    // one per rig
  std::vector<std::unique_ptr<protocol::ClipDictionary>> dictionaries;  // one per rig
};

class AssetLibrary {
 public:
  // Adds a loaded model (a second model with the same content hash is ignored: success).
  // Every rig's skeleton and clips are validated here, once (Skeleton::validate,
  // Clip::validate): the per-frame jobs on this library's models (PoseTrack, the clip
  // dictionaries) then skip their per-node and per-track checks (assets_validated).
  // Errors: null model, a rig with no node, an invalid skeleton or clip, a rig whose pose
  // format cannot be built (the message names the model, the rig and the clip).
  Status add(std::shared_ptr<const Model> model);
  // Loads a model source ("path/to/Fox.glb" or "gen-rig:N") and adds it.
  Status load(const std::string& source);

  // nullptr when no model has that content hash.
  const ClientModel* find(uint64_t content_hash) const;
  std::size_t size() const { return models_.size(); }
  const ClientModel& at(std::size_t index) const { return *models_[index]; }

 private:
  // Heap entries: a ClientModel's address never changes once added, so bindings may keep
  // pointers while other clients add models.
  std::vector<std::unique_ptr<const ClientModel>> models_;  // in the order added
};

// A manifest entry bound to a local model.
struct BoundAsset {
  uint32_t model_id = 0;
  const ClientModel* local = nullptr;  // points into the AssetLibrary
};

// The server's model ids -> local models.
class AssetBinding {
 public:
  // Binds every manifest entry. An entry whose hash no local model has is first looked for by
  // loading its source: "gen-rig:N" directly, a file name under each of `search_dirs` (when
  // `load_missing` is set). Fails on the first entry that stays unbound, with a message naming
  // the model id, its source, the server's hash and what the client has instead, e.g.
  // "asset mismatch: server model 1 'Fox.glb' has content hash 0x1234...; the client has no
  // model with that hash (local models: Fox.glb 0x9abc...)". Duplicate model ids fail too.
  static Result<AssetBinding> bind(std::span<const protocol::AssetInfo> manifest,
                                   AssetLibrary& library, bool load_missing,
                                   std::span<const std::string> search_dirs);

  // nullptr for a model id the manifest did not list.
  const ClientModel* find(uint32_t model_id) const;
  std::size_t size() const { return assets_.size(); }

 private:
  std::vector<BoundAsset> assets_;  // sorted by model_id
};

}  // namespace posecast::client
