#include "posecast/client/asset_library.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "posecast/rig/model_source.h"

namespace posecast::client {
namespace {

std::string hex64(uint64_t v) {
  char buffer[19];
  std::snprintf(buffer, sizeof buffer, "0x%016llx", static_cast<unsigned long long>(v));
  return buffer;
}

std::string describe_local_models(const AssetLibrary& library) {
  if (library.size() == 0) return "the client has no models loaded";
  std::string text = "local models:";
  for (std::size_t i = 0; i < library.size(); ++i) {
    const ClientModel& m = library.at(i);
    text += " " + m.model->source + " " + hex64(m.model->content_hash) + ";";
  }
  text.pop_back();
  return text;
}

}  // namespace

Status AssetLibrary::add(std::shared_ptr<const Model> model) {
  if (!model) return Error{"asset library: null model"};
  if (find(model->content_hash) != nullptr) return {};
  for (std::size_t r = 0; r < model->rigs.size(); ++r) {
    const Rig& rig = model->rigs[r];
    const std::string where = "asset library: " + model->source + ": rigs[" + std::to_string(r) + "]";
    if (Status s = rig.skeleton.validate(); !s) return Error{where + ": " + s.error().message};
    if (rig.skeleton.node_count() == 0) return Error{where + ": skeleton has no node"};
    for (std::size_t c = 0; c < rig.clips.size(); ++c) {
      if (Status s = rig.clips[c].validate(rig.skeleton); !s) {
        return Error{where + ".clips[" + std::to_string(c) + "] '" + rig.clips[c].name +
                     "': " + s.error().message};
      }
    }
  }
  ClientModel entry;
  Result<std::vector<std::shared_ptr<const protocol::PoseFormat>>> formats =
      protocol::build_model_pose_formats(*model);
  if (!formats) return Error{"asset library: " + formats.error().message};
  entry.formats = std::move(formats).value();
  for (std::size_t r = 0; r < model->rigs.size(); ++r) {
    const Rig& rig = model->rigs[r];
    entry.dictionaries.push_back(
        std::make_unique<protocol::ClipDictionary>(rig.skeleton, rig.clips, *entry.formats[r],
                                                   /*assets_validated=*/true));
  }
  entry.model = std::move(model);
  models_.push_back(std::make_unique<const ClientModel>(std::move(entry)));
  return {};
}

Status AssetLibrary::load(const std::string& source) {
  Result<Model> model = rig::load_model_source(source);
  if (!model) return Error{"asset library: " + model.error().message};
  return add(std::make_shared<const Model>(std::move(model).value()));
}

const ClientModel* AssetLibrary::find(uint64_t content_hash) const {
  for (const auto& m : models_) {
    if (m->model->content_hash == content_hash) return m.get();
  }
  return nullptr;
}

Result<AssetBinding> AssetBinding::bind(std::span<const protocol::AssetInfo> manifest,
                                        AssetLibrary& library, bool load_missing,
                                        std::span<const std::string> search_dirs) {
  // Missing models are loaded first, then every entry is resolved.
  for (const protocol::AssetInfo& info : manifest) {
    if (library.find(info.content_hash) != nullptr || !load_missing) continue;
    // Only names that resolve locally are tried; failures are reported below as a mismatch.
    if (rig::is_generated_rig_source(info.source)) {
      (void)library.load(info.source);
      continue;
    }
    const std::filesystem::path name = std::filesystem::path(info.source).filename();
    if (name.empty()) continue;
    for (const std::string& dir : search_dirs) {
      const std::filesystem::path candidate = std::filesystem::path(dir) / name;
      std::error_code ec;
      if (!std::filesystem::is_regular_file(candidate, ec)) continue;
      if (library.load(candidate.string()) && library.find(info.content_hash) != nullptr) break;
    }
  }

  AssetBinding binding;
  binding.assets_.reserve(manifest.size());
  for (const protocol::AssetInfo& info : manifest) {
    const ClientModel* local = library.find(info.content_hash);
    if (local == nullptr) {
      return Error{"asset mismatch: server model " + std::to_string(info.model_id) + " '" +
                   info.source + "' has content hash " + hex64(info.content_hash) +
                   "; the client has no model with that hash (" + describe_local_models(library) +
                   ")"};
    }
    binding.assets_.push_back(BoundAsset{info.model_id, local});
  }
  std::sort(binding.assets_.begin(), binding.assets_.end(),
            [](const BoundAsset& a, const BoundAsset& b) { return a.model_id < b.model_id; });
  for (std::size_t i = 1; i < binding.assets_.size(); ++i) {
    if (binding.assets_[i].model_id == binding.assets_[i - 1].model_id) {
      return Error{"asset manifest: model id " + std::to_string(binding.assets_[i].model_id) +
                   " is listed twice"};
    }
  }
  return binding;
}

const ClientModel* AssetBinding::find(uint32_t model_id) const {
  auto it = std::lower_bound(assets_.begin(), assets_.end(), model_id,
                             [](const BoundAsset& a, uint32_t id) { return a.model_id < id; });
  if (it == assets_.end() || it->model_id != model_id) return nullptr;
  return it->local;
}

}  // namespace posecast::client
