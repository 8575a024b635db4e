#include "posecast/client/snapshot_buffer.h"

#include <algorithm>

#include "posecast/protocol/pose_codec.h"

namespace posecast::client {
namespace {

using protocol::kNoTick;

bool part_seen(const SnapshotView& view, uint8_t index) {
  return (view.part_bits[index >> 6] >> (index & 63u)) & 1u;
}
void mark_part(SnapshotView& view, uint8_t index) {
  view.part_bits[index >> 6] |= uint64_t{1} << (index & 63u);
  ++view.parts_received;
}

auto entry_less = [](const ViewEntry& e, uint32_t id) { return e.entity_id < id; };

}  // namespace

const ViewEntry* SnapshotView::find(uint32_t entity_id, std::size_t hint) const {
  if (hint < entries.size() && entries[hint].entity_id == entity_id) return &entries[hint];
  return find(entity_id);
}

const ViewEntry* SnapshotView::find(uint32_t entity_id) const {
  auto it = std::lower_bound(entries.begin(), entries.end(), entity_id, entry_less);
  return it != entries.end() && it->entity_id == entity_id ? &*it : nullptr;
}

SnapshotBuffer::SnapshotBuffer(const SnapshotBufferSettings& settings) : settings_(settings) {
  settings_.capacity = std::max<std::size_t>(settings_.capacity, 2);
  views_.resize(settings_.capacity);
  free_views_.reserve(settings_.capacity);
  for (std::size_t i = settings_.capacity; i > 0; --i) {
    free_views_.push_back(static_cast<uint32_t>(i - 1));
  }
  order_.reserve(settings_.capacity);
}

void SnapshotBuffer::set_tick_rate(uint32_t tick_rate_hz) {
  tick_rate_hz_ = tick_rate_hz;
  for (uint32_t slot : order_) views_[slot].time_us = tick_time_us(views_[slot].tick);
}

void SnapshotBuffer::clear() {
  for (uint32_t slot : order_) {
    release_view(views_[slot]);
    free_views_.push_back(slot);
  }
  order_.clear();
  newest_complete_ = kNoTick;
}

void SnapshotBuffer::release_view(SnapshotView& view) {
  for (const ViewEntry& e : view.entries) pool_.release(e.slot);
  view.entries.clear();
  view.tick = kNoTick;
}

SnapshotView* SnapshotBuffer::find_view(uint32_t tick) {
  auto it = std::lower_bound(order_.begin(), order_.end(), tick,
                             [&](uint32_t slot, uint32_t t) { return views_[slot].tick < t; });
  return it != order_.end() && views_[*it].tick == tick ? &views_[*it] : nullptr;
}

const SnapshotView* SnapshotBuffer::view(uint32_t tick) const {
  return const_cast<SnapshotBuffer*>(this)->find_view(tick);
}

uint32_t SnapshotBuffer::newest_tick() const {
  return order_.empty() ? kNoTick : views_[order_.back()].tick;
}

SnapshotView* SnapshotBuffer::open_view(const protocol::Snapshot& part, int64_t arrival_us,
                                        PartResult& result) {
  if (free_views_.empty()) {
    SnapshotView& oldest = views_[order_.front()];
    if (part.server_tick < oldest.tick) {
      result.outcome = PartOutcome::kTooOld;
      return nullptr;
    }
    if (oldest.tick == newest_complete_) newest_complete_ = kNoTick;  // only when capacity 2
    release_view(oldest);
    free_views_.push_back(order_.front());
    order_.erase(order_.begin());
  }
  const uint32_t slot = free_views_.back();
  free_views_.pop_back();
  SnapshotView& view = views_[slot];
  view.tick = part.server_tick;
  view.time_us = tick_time_us(part.server_tick);
  view.baseline_tick = part.baseline_tick;
  view.prior_tick = part.prior_tick;
  view.older_tick = part.older_tick;
  view.part_count = part.part_count;
  view.parts_received = 0;
  std::fill(std::begin(view.part_bits), std::end(view.part_bits), uint64_t{0});
  view.complete = false;
  view.failed = false;
  view.first_arrival_us = arrival_us;
  view.entries.clear();
  auto pos = std::lower_bound(order_.begin(), order_.end(), part.server_tick,
                              [&](uint32_t s, uint32_t t) { return views_[s].tick < t; });
  order_.insert(pos, slot);
  result.new_tick = true;
  return &view;
}

PartResult SnapshotBuffer::apply(const protocol::Snapshot& part, const EntityRegistry& registry,
                                 int64_t arrival_us) {
  PartResult result;
  SnapshotView* view = find_view(part.server_tick);
  if (view != nullptr) {
    if (view->baseline_tick != part.baseline_tick || view->prior_tick != part.prior_tick ||
        view->older_tick != part.older_tick || view->part_count != part.part_count) {
      result.outcome = PartOutcome::kInconsistent;
      return result;
    }
    if (part_seen(*view, part.part_index)) {
      result.outcome = PartOutcome::kDuplicate;
      return result;
    }
  } else {
    view = open_view(part, arrival_us, result);
    if (view == nullptr) return result;
  }
  mark_part(*view, part.part_index);
  // The reference views are the same for every record of the part: looked up once.
  const ReferenceViews references = reference_views(*view);
  for (const protocol::EntityPose& record : part.entities) {
    decode_record(*view, references, record, registry, result);
  }
  if (view->parts_received == view->part_count && !view->failed) {
    try_complete(*view, registry);
    result.completed = view->complete;
  }
  return result;
}

SnapshotBuffer::ReferenceViews SnapshotBuffer::reference_views(const SnapshotView& view) const {
  auto held = [&](uint32_t tick) -> const SnapshotView* {
    if (tick == kNoTick) return nullptr;
    const SnapshotView* v = this->view(tick);
    return v != nullptr && v->complete ? v : nullptr;
  };
  ReferenceViews refs;
  refs.baseline = held(view.baseline_tick);
  refs.prior = held(view.prior_tick);
  refs.older = held(view.older_tick);
  return refs;
}

namespace {

// Counts a record that could not be taken and marks its view failed; the first failure of a
// part is kept as its message.
void note_record_failure(SnapshotView& view, const protocol::EntityPose& record,
                         PartResult& result, uint32_t& counter, const std::string& why) {
  ++counter;
  view.failed = true;
  if (result.first_error.empty()) {
    result.first_error = "snapshot " + std::to_string(view.tick) + ": entity " +
                         std::to_string(record.entity_id) + ": " + why;
  }
}

}  // namespace

protocol::PoseReference SnapshotBuffer::record_references(const SnapshotView& view,
                                                          const ReferenceViews& references,
                                                          const protocol::EntityPose& record,
                                                          std::size_t hint) const {
  // A record predicted from the clip dictionary reads no reference codes (pose_codec.h), so
  // references stored exact stay deferred; any other record needs them computed.
  const bool needs_reference_codes = !protocol::peek_pose_record(record.pose_bytes()).from_dictionary;
  protocol::PoseReference reference;
  reference.tick_rate_hz = tick_rate_hz_;
  auto held = [&](const SnapshotView* ref_view) -> const protocol::QuantizedPose* {
    if (ref_view == nullptr) return nullptr;
    const ViewEntry* e = ref_view->find(record.entity_id, hint);
    if (e == nullptr || e->generation != record.generation) return nullptr;
    const PoseSample& held_sample = pool_.at(e->slot);
    if (needs_reference_codes && !held_sample.decoded()) return nullptr;  // as if not held
    return &held_sample.quantized;
  };
  // Newest first, each older than the one before; a reference the buffer lacks stays null
  // and the codec refuses a record that needs it.
  if (view.baseline_tick != kNoTick && view.baseline_tick < view.tick) {
    reference.baseline = held(references.baseline);
    reference.baseline_age = view.tick - view.baseline_tick;
    if (reference.baseline != nullptr && view.prior_tick != kNoTick &&
        view.prior_tick < view.baseline_tick) {
      reference.prior = held(references.prior);
      reference.prior_age = view.baseline_tick - view.prior_tick;
      if (reference.prior != nullptr && view.older_tick != kNoTick &&
          view.older_tick < view.prior_tick) {
        reference.older = held(references.older);
        reference.older_age = view.prior_tick - view.older_tick;
      }
    }
  }
  return reference;
}

// Only the local TRS: interpolation reads them every frame. The palette is computed by whoever
// shows this pose unchanged (PoseSample::compute_palette, PoseTrack), not here. A
// dictionary-predicted record that differs from its prediction mostly equals it, and the
// rotations the dictionary's quantiser has already dequantised are reused where the codes agree
// (same bits), the rest dequantised. `locals` is sized even when deferred: users check a pair's
// size before they need its poses (PoseTrack::pair_info).
void SnapshotBuffer::finish_sample(PoseSample& sample, const ClientEntity& entity,
                                   const protocol::PoseDecodeInfo& info) {
  sample.locals.resize(entity.format->node_count());
  sample.format = entity.format;
  sample.pending = nullptr;
  sample.undecodable = false;
  if (info.deferred) {
    // An exact record: its codes are the prediction of its recipe, computed when someone
    // needs them (PoseSample::decoded). A frame shown from the recipe never does.
    sample.pending = entity.dictionary;
  } else if (info.from_dictionary) {
    protocol::dequantize_pose_reusing(*entity.format, sample.quantized, prediction_,
                                      entity.dictionary->predicted_rotations(), sample.locals);
  } else {
    protocol::dequantize_pose(*entity.format, sample.quantized, sample.locals);
  }
  sample.skeleton = entity.skeleton;
  sample.recipe_verified = info.from_dictionary && sample.quantized.recipe.count > 0 &&
                           (info.exact || sample.quantized.values == prediction_.values);
}

void SnapshotBuffer::decode_record(SnapshotView& view, const ReferenceViews& references,
                                   const protocol::EntityPose& record,
                                   const EntityRegistry& registry, PartResult& result) {
  // Records come in id order, so the record's place among this view's entries so far is
  // where the entity sits in the registry and in the reference views when every entity is in
  // every snapshot: tried first (one probe instead of a binary search each).
  const std::size_t hint = view.entries.size();
  const ClientEntity* entity = registry.find(record.entity_id, hint);
  if (entity == nullptr || generation_newer(record.generation, entity->generation)) {
    note_record_failure(view, record, result, result.unknown_entity,
                        "no spawn seen for generation " + std::to_string(record.generation));
    return;
  }
  if (record.generation != entity->generation) {
    ++result.stale_generation;  // an id since reused: the record is for an entity gone
    return;
  }
  auto pos = view.entries.empty() || view.entries.back().entity_id < record.entity_id
                 ? view.entries.end()
                 : std::lower_bound(view.entries.begin(), view.entries.end(), record.entity_id,
                                    entry_less);
  if (pos != view.entries.end() && pos->entity_id == record.entity_id) {
    ++result.duplicate_records;
    return;
  }
  if (view.entries.size() >= settings_.max_entities_per_view) {
    note_record_failure(view, record, result, result.over_capacity,
                        "more than " + std::to_string(settings_.max_entities_per_view) +
                            " entities in one view");
    return;
  }

  // Acquired first: growing the pool moves its samples, so references are taken after.
  const uint32_t slot = pool_.acquire();
  const protocol::PoseReference reference = record_references(view, references, record, hint);
  PoseSample& sample = pool_.at(slot);
  protocol::PoseDecodeInfo info;
  const Status decoded =
      protocol::decode_pose(*entity->format, record.pose_bytes(), reference, sample.quantized,
                            protocol::PoseCoding::kRangeCoded, entity->dictionary, &prediction_,
                            &info, /*defer_exact=*/true);
  if (!decoded) {
    pool_.release(slot);
    const std::string& why = decoded.error().message;
    // The codec names a missing reference ("... a reference pose the receiver does not hold",
    // "needs 2 reference poses, the receiver holds 1"); anything else is a corrupt record.
    const bool missing = why.find("does not hold") != std::string::npos ||
                         why.find("the receiver holds") != std::string::npos;
    note_record_failure(view, record, result,
                        missing ? result.missing_reference : result.decode_errors, why);
    return;
  }
  // The root, against the held roots of the references the pose record itself used (the
  // server's rule: protocol::root_reference).
  const Status root = protocol::decode_root(record.root_bytes(),
                                            protocol::root_reference(reference, info.references),
                                            sample.quantized.root);
  if (!root) {
    pool_.release(slot);
    note_record_failure(view, record, result, result.decode_errors, root.error().message);
    return;
  }
  finish_sample(sample, *entity, info);
  view.entries.insert(pos, ViewEntry{record.entity_id, record.generation, true, slot});
  ++result.decoded;
}

void SnapshotBuffer::try_complete(SnapshotView& view, const EntityRegistry& registry) {
  if (view.baseline_tick != kNoTick) {
    const SnapshotView* baseline = this->view(view.baseline_tick);
    if (baseline == nullptr || !baseline->complete || view.baseline_tick >= view.tick) return;
    // Entities left out of this tick keep their baseline pose (while still alive here).
    for (const ViewEntry& carried : baseline->entries) {
      const ClientEntity* entity = registry.find(carried.entity_id);
      if (entity == nullptr || entity->generation != carried.generation ||
          !entity->alive_at(view.tick)) {
        continue;
      }
      auto pos = std::lower_bound(view.entries.begin(), view.entries.end(), carried.entity_id,
                                  entry_less);
      if (pos != view.entries.end() && pos->entity_id == carried.entity_id) continue;
      pool_.retain(carried.slot);
      view.entries.insert(pos, ViewEntry{carried.entity_id, carried.generation, false, carried.slot});
    }
  }
  view.complete = true;
  if (newest_complete_ == kNoTick || view.tick > newest_complete_) newest_complete_ = view.tick;
}

protocol::Ack SnapshotBuffer::ack() const {
  protocol::Ack ack;
  ack.newest_tick = newest_complete_;
  ack.previous_mask = 0;
  if (newest_complete_ == kNoTick) return ack;
  for (uint32_t i = 0; i < 32 && i + 1 <= newest_complete_; ++i) {
    const SnapshotView* v = view(newest_complete_ - 1 - i);
    if (v != nullptr && v->complete) ack.previous_mask |= 1u << i;
  }
  return ack;
}

bool SnapshotBuffer::usable(const SnapshotView& view, uint32_t entity_id, uint16_t generation,
                            std::size_t hint, SampleRef& out) const {
  const ViewEntry* e = view.find(entity_id, hint);
  if (e == nullptr || e->generation != generation || !(e->decoded || view.complete)) return false;
  out.sample = &pool_.at(e->slot);
  out.tick = view.tick;
  out.time_us = view.time_us;
  out.own_record = e->decoded;
  return true;
}

ViewSplit SnapshotBuffer::locate(int64_t render_us) const {
  // First view strictly after the render time.
  auto split = std::upper_bound(order_.begin(), order_.end(), render_us,
                                [&](int64_t r, uint32_t slot) { return r < views_[slot].time_us; });
  return ViewSplit{render_us, static_cast<std::size_t>(split - order_.begin())};
}

SampleWindow SnapshotBuffer::window(uint32_t entity_id, uint16_t generation,
                                    int64_t render_us) const {
  return window(entity_id, generation, locate(render_us), 0);
}

SampleWindow SnapshotBuffer::window(uint32_t entity_id, uint16_t generation,
                                    const ViewSplit& at, std::size_t hint) const {
  SampleWindow w;
  const std::size_t split = std::min(at.first_after, order_.size());
  for (std::size_t i = split; i < order_.size(); ++i) {
    if (usable(views_[order_[i]], entity_id, generation, hint, w.after)) break;
  }
  std::size_t i = split;
  while (i > 0) {
    --i;
    if (usable(views_[order_[i]], entity_id, generation, hint, w.before)) break;
  }
  if (w.before) {
    while (i > 0) {
      --i;
      if (usable(views_[order_[i]], entity_id, generation, hint, w.previous)) break;
    }
  }
  return w;
}

const PoseSample* SnapshotBuffer::sample(uint32_t tick, uint32_t entity_id,
                                         uint16_t generation) const {
  const SnapshotView* v = view(tick);
  SampleRef ref;
  if (v == nullptr || !usable(*v, entity_id, generation, 0, ref)) return nullptr;
  return ref.sample;
}

std::size_t SnapshotBuffer::depth_after(int64_t render_us) const {
  std::size_t n = 0;
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    if (views_[*it].time_us <= render_us) break;
    ++n;
  }
  return n;
}

}  // namespace posecast::client
