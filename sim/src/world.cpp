#include "posecast/sim/world.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "fault_injection.h"
#include "posecast/hash.h"
#include "world_impl.h"

namespace posecast::sim {
namespace {

// Entities a worker claims at a time in the evaluation pass (WorkerShare below): an eighth of
// an even share in whole palette batches, 8 to 32 (a chunk that is not whole batches splits
// one into two smaller ones). 32 Fox entities are 10-25 us of work, so in a large World the
// shares' counters are touched rarely; in a small one a thief could take only what its owner
// had not claimed yet, and at 32 the two workers of a 100-entity World ended their passes up
// to a chunk apart (bench_animator Fox/100/threads:2, three alternating runs: 255-259 ns per
// entity-tick with 32, 224-231 with 8). At 10,000 entities 8 cost 1-3 % (more claims,
// GenRig128/1000 too), hence the scaling. A lone worker has nobody to balance with.
constexpr std::size_t kMaxClaimedEntities = 32;
static_assert(kMaxClaimedEntities % kPaletteBatchSize == 0);
std::size_t claimed_entities(std::size_t entities, unsigned workers) {
  if (workers <= 1) return kMaxClaimedEntities;
  const std::size_t batches = entities / (std::size_t{8} * workers) / kPaletteBatchSize;
  return std::clamp(batches * kPaletteBatchSize, kPaletteBatchSize, kMaxClaimedEntities);
}

// From this many bytes of palettes in a tick, a World that does not hash them writes them
// past the caches (PaletteBatchJob::streaming_stores): they outgrow the cache levels before
// anyone reads them, and regular stores would first read every line they write and push the
// entities' state out of the cache. Measured (bench_animator Fox, one thread, both with
// cache-line-aligned palettes): at 1,000 entities (1.5 MB of palettes) streaming
// took 1.04-1.09x the time of regular stores, at 10,000 (15 MB) about 0.87x (507-522 ns
// against 587-599); the switch sits between, where the caches (1 MB L2 per core, 32 MB L3 on
// the machine measured) no longer hold the palettes beside the rest of the tick (nothing
// between 1,000 and 10,000 entities was timed).
constexpr std::size_t kStreamingPaletteBytes = std::size_t{8} << 20;

struct PassContext {
  World::Impl* impl = nullptr;
  int64_t dt_us = 0;
};

// Claims up to `chunk` entities of `share`: from the front for its owner, from the back for
// another worker (`from_back`). [begin, end), or an empty range when none is left.
std::pair<std::size_t, std::size_t> claim(WorkerShare& share, std::size_t chunk, bool from_back) {
  uint64_t packed = share.range.load(std::memory_order_relaxed);
  for (;;) {
    const std::size_t front = WorkerShare::front_of(packed), back = WorkerShare::back_of(packed);
    if (front >= back) return {0, 0};
    const std::size_t taken = std::min(back - front, chunk);
    const std::pair<std::size_t, std::size_t> claimed =
        from_back ? std::pair{back - taken, back} : std::pair{front, front + taken};
    const uint64_t rest = from_back ? WorkerShare::pack(front, back - taken) : WorkerShare::pack(front + taken, back);
    if (share.range.compare_exchange_weak(packed, rest, std::memory_order_relaxed)) return claimed;
  }
}

// The root transform's part of the world hash: its four floats' bits.
void add_root(Hasher& h, const RootTransform& root) {
  h.add_float(root.x);
  h.add_float(root.y);
  h.add_float(root.z);
  h.add_float(root.yaw);
}

// The entity's part of the tick check (tick_check.h), right after its evaluation and advance,
// while its state and palette are in the cache: its state hash, and its palette hash when its
// id slot is the tick's or a command targeted it. `hashed`: the pass hashed every palette.
void add_tick_check(Entity& entity, uint64_t tick, bool hashed, TickCheck& check) {
  check.state.add(entity.state.id, hash_entity_state(entity.state));
  if (!entity.palette_due && !palette_slot_due(entity.state.id, tick)) return;
  entity.palette_due = false;
  check.palettes.add(entity.state.id, hashed ? entity.palette_hash : hash_palette(entity.palette));
  ++check.palettes_checked;
}

// The tick's events in the World's order: by entity id, each entity's in the order its advance
// found them (one worker advances an entity, so its events are contiguous in that worker's
// list; the stable sort keeps them so).
void merge_events(World::Impl& impl) {
  impl.events.clear();
  for (EvalScratch& scratch : impl.scratch) {
    impl.events.insert(impl.events.end(), scratch.events.begin(), scratch.events.end());
    scratch.events.clear();
  }
  if (impl.scratch.size() > 1 && impl.events.size() > 1) {
    std::stable_sort(impl.events.begin(), impl.events.end(),
                     [](const AnimationEvent& a, const AnimationEvent& b) { return a.entity < b.entity; });
  }
}

// The events' part of the world hash (nothing when the tick has none: a world without
// markers hashes its palettes alone).
void add_events(Hasher& h, std::span<const AnimationEvent> events) {
  if (events.empty()) return;
  h.add_u32(static_cast<uint32_t>(events.size()));
  for (const AnimationEvent& e : events) {
    h.add_u32(e.entity);
    h.add_u32((uint32_t{e.clip} << 16) | e.marker);
    h.add_u32(e.layer);
  }
}

// Whether the pass evaluates entity `index` when it computes no palettes: only for the
// observer, and only what it asks for.
bool needs_pose(const World::Impl& impl, std::size_t index, EntityId id) {
  return impl.pose_observer != nullptr && impl.pose_observer->wants_pose(index, id);
}

// One worker's part of the evaluation pass: chunks of entities claimed in index order, its own
// scratch buffers. Which worker evaluates an entity never changes the entity's results (they
// depend on the entity's own state and the shared assets only; the scratch buffers are
// overwritten before they are read), so any claiming order gives the same bits: the
// thread-count tests compare 1 and 2 threads tick by tick.
// Where an entity's advance reports the markers it crosses: none for a rig without markers,
// which spares it the search.
std::vector<AnimationEvent>* event_list(const Entity& entity, std::vector<AnimationEvent>& events) {
  return entity.rig_has_markers ? &events : nullptr;
}

void evaluate_range(void* context, unsigned worker, unsigned workers) {
  PassContext& pass = *static_cast<PassContext*>(context);
  World::Impl& impl = *pass.impl;
  EvalScratch& scratch = impl.scratch[worker];
  const bool hash = impl.options.hash_palettes;
  const bool checks = impl.options.tick_checks;
  const bool palettes = impl.options.palettes || hash || checks;
  const EvaluationFault* fault = impl.options.fault;
  const std::size_t count = impl.entities.size();
  const std::size_t chunk = claimed_entities(count, workers);
  unsigned victim = worker;  // whose share is being claimed: its own first, then the others'
  for (;;) {
    const auto [begin, end] = claim(impl.shares[victim], chunk, victim != worker);
    if (begin == end) {
      victim = (victim + 1) % workers;
      if (victim == worker) return;  // every share is empty
      continue;
    }
    scratch.entities_claimed += end - begin;
    // Batches of up to kPaletteBatchSize entities that share a rig (evaluate_batch), in index
    // order: every entity when palettes are computed, else only those the observer wants (the
    // others just advance).
    for (std::size_t next = begin; next < end;) {
      Entity* batch[kPaletteBatchSize];
      std::size_t indices[kPaletteBatchSize];
      std::size_t size = 0;
      const Rig* rig = nullptr;
      for (; next < end && size < kPaletteBatchSize; ++next) {
        Entity& entity = impl.entities[next];
        if (!palettes && !needs_pose(impl, next, entity.state.id)) {
          entity.failed = false;
          advance_entity(entity.state, *entity.rig, pass.dt_us, event_list(entity, scratch.events), impl.tick);  // not evaluated
          continue;
        }
        if (size > 0 && entity.rig != rig) break;
        rig = entity.rig;
        indices[size] = next;
        batch[size++] = &entity;
      }
      if (size == 0) continue;
      // The next batch's first entity, a batch ahead (evaluate_batch requests the others').
      if (next < count) prefetch_entity_state(impl.entities[next]);
      // The world's palette bytes as if every entity had this batch's rig: exact for a world
      // of one model, an estimate otherwise (a cache policy; the values are the same).
      const bool stream = palettes && !hash &&
                          count * rig->skeleton.joint_count() * sizeof(glm::mat4) >= kStreamingPaletteBytes;
      evaluate_batch(impl.tables, batch, size, scratch, palettes, hash, stream);
      scratch.poses_evaluated += size;
      if (stream) scratch.palettes_streamed += size;
      for (std::size_t k = 0; k < size; ++k) {
        Entity& entity = *batch[k];
        if (fault != nullptr) apply_palette_fault(*fault, impl.tick, entity, hash);
        if (entity.failed) ++scratch.failures;
        if (impl.pose_observer != nullptr && !entity.failed) {
          // evaluate_batch leaves the evaluated local poses in scratch.poses.
          impl.pose_observer->observe_pose(
              indices[k], entity.state.id,
              std::span<const Transform>(scratch.poses[k].data(), rig->skeleton.node_count()), worker);
        }
        advance_entity(entity.state, *entity.rig, pass.dt_us, event_list(entity, scratch.events), impl.tick);
        if (fault != nullptr) apply_state_fault(*fault, impl.tick, entity);
        if (checks) add_tick_check(entity, impl.tick, hash, scratch.check);
      }
    }
  }
}

}  // namespace

Status validate_model(const Model& model) {
  const std::string name = "model '" + model.source + "'";
  if (model.rigs.empty()) return Error{name + ": has no rig"};
  if (model.rigs.size() > std::numeric_limits<uint16_t>::max()) return Error{name + ": too many rigs"};
  for (std::size_t r = 0; r < model.rigs.size(); ++r) {
    const Rig& rig = model.rigs[r];
    const std::string where = name + ": rigs[" + std::to_string(r) + "]";
    if (Status s = rig.skeleton.validate(); !s) return Error{where + ": " + s.error().message};
    if (rig.skeleton.node_count() == 0) return Error{where + ": skeleton has no node"};
    if (rig.clips.size() > std::numeric_limits<uint16_t>::max()) return Error{where + ": too many clips"};
    if (!rig.root_motion.empty() && rig.root_motion.size() != rig.clips.size()) {
      return Error{where + ": " + std::to_string(rig.root_motion.size()) + " root-motion tracks for " +
                   std::to_string(rig.clips.size()) + " clips"};
    }
    for (std::size_t c = 0; c < rig.clips.size(); ++c) {
      const Clip& clip = rig.clips[c];
      const std::string clip_where = where + ".clips[" + std::to_string(c) + "] '" + clip.name + "'";
      if (Status s = clip.validate(rig.skeleton); !s) return Error{clip_where + ": " + s.error().message};
      if (clip.duration_us < 0 || clip.duration_us > kMaxClipDurationUs) {
        return Error{clip_where + ": duration " + std::to_string(clip.duration_us) +
                     " us is outside 0.." + std::to_string(kMaxClipDurationUs)};
      }
    }
  }
  return {};
}

std::size_t World::Impl::find(EntityId id) const {
  const auto it = std::lower_bound(entities.begin(), entities.end(), id,
                                   [](const Entity& e, EntityId v) { return e.state.id < v; });
  if (it == entities.end() || it->state.id != id) return entities.size();
  return static_cast<std::size_t>(it - entities.begin());
}

void World::Impl::resize_scratch() {
  shares = std::make_unique<WorkerShare[]>(pool->size());
  scratch.resize(pool->size());
  for (EvalScratch& s : scratch) s.ensure(tables.max_nodes);
  command_scratch.ensure(tables.max_nodes);
}

void World::Impl::assign_shares() {
  const uint64_t workers = pool->size();
  const uint64_t count = entities.size();
  // In proportion to last tick's claims (exactly them when the entity count is unchanged, so
  // each entity stays with its worker); equal parts before the first pass.
  uint64_t claimed = 0;
  for (const EvalScratch& s : scratch) claimed += s.entities_claimed;
  // Where worker w's share starts: the claims of the workers before it, scaled to `count`
  // (both factors below 2^32, as entity ids are 32-bit: no overflow). Worker `workers` starts
  // at `count` either way.
  uint64_t before = 0;
  const auto start = [&](uint64_t w) { return claimed > 0 ? count * before / claimed : count * w / workers; };
  for (uint64_t w = 0; w < workers; ++w) {
    const uint64_t begin = start(w);
    before += scratch[w].entities_claimed;
    shares[w].range.store(WorkerShare::pack(begin, start(w + 1)), std::memory_order_relaxed);
  }
  for (EvalScratch& s : scratch) s.entities_claimed = 0;
}

void World::Impl::prepare_entity(Entity& entity) {
  entity.palette.assign(entity.rig->skeleton.joint_count(), glm::mat4(1.0f));
  entity.palette_hash = 0;
  entity.failed = false;
  layout_cursors(entity.state, *entity.rig);
}

void World::Impl::apply_due_commands() {
  due.clear();
  queue.take_due(tick, due);
  for (const QueuedCommand& queued : due) {
    if (queued.command.tick < tick) ++stats.commands_late;
    Status status = apply(queued.command);
    if (options.tick_checks) {
      // A spawned or commanded entity's palette joins this tick's check (tick_check.h),
      // rejected commands included: the replay rejects them too.
      if (const std::size_t i = find(queued.command.entity); i < entities.size()) entities[i].palette_due = true;
    }
    if (status) {
      ++stats.commands_applied;
    } else {
      ++stats.commands_rejected;
      stats.last_rejection = "tick " + std::to_string(tick) + ": " +
                             command_name(queued.command.body) + " entity " +
                             std::to_string(queued.command.entity) + ": " +
                             status.error().message;
    }
  }
  // `due` stays until the next tick: last_tick_commands() shows it.
}

World::World(const WorldOptions& options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  impl_->options.tick_rate_hz = std::clamp<uint32_t>(options.tick_rate_hz, 1u, 1000000u);
  impl_->options.threads = std::max(1u, options.threads);
  impl_->pool.emplace(impl_->options.threads);
  impl_->resize_scratch();
}

World::~World() = default;

Result<ModelId> World::add_model(std::shared_ptr<const Model> model) {
  if (!model) return Error{"add_model: null model"};
  if (Status s = validate_model(*model); !s) return s.error();
  if (impl_->tables.models.size() >= std::numeric_limits<ModelId>::max()) {
    return Error{"add_model: too many models"};
  }
  for (const Rig& rig : model->rigs) {
    impl_->tables.max_nodes = std::max(impl_->tables.max_nodes, rig.skeleton.node_count());
  }
  impl_->tables.models.push_back(std::move(model));
  impl_->resize_scratch();
  return static_cast<ModelId>(impl_->tables.models.size() - 1);
}

std::size_t World::model_count() const { return impl_->tables.models.size(); }

const Model* World::model(ModelId id) const {
  return id < impl_->tables.models.size() ? impl_->tables.models[id].get() : nullptr;
}

Result<int32_t> World::add_mask(JointMask mask) {
  const Rig* rig = impl_->tables.rig(mask.model, mask.rig);
  const std::string where = "mask '" + mask.name + "'";
  if (rig == nullptr) {
    return Error{where + ": unknown model " + std::to_string(mask.model) + " or rig " +
                 std::to_string(mask.rig)};
  }
  if (mask.node_weights.size() != rig->skeleton.node_count()) {
    return Error{where + ": " + std::to_string(mask.node_weights.size()) + " node weights for " +
                 std::to_string(rig->skeleton.node_count()) + " nodes"};
  }
  for (float w : mask.node_weights) {
    if (!std::isfinite(w)) return Error{where + ": a node weight is not finite"};
  }
  if (impl_->tables.masks.size() >= static_cast<std::size_t>(std::numeric_limits<int32_t>::max())) {
    return Error{where + ": too many masks"};
  }
  impl_->tables.masks.push_back(std::move(mask));
  return static_cast<int32_t>(impl_->tables.masks.size() - 1);
}

std::size_t World::mask_count() const { return impl_->tables.masks.size(); }

int32_t World::find_mask(const std::string& name) const {
  for (std::size_t i = 0; i < impl_->tables.masks.size(); ++i) {
    if (impl_->tables.masks[i].name == name) return static_cast<int32_t>(i);
  }
  return kNoMask;
}

void World::submit(uint32_t submitter, Command command) {
  impl_->queue.submit(submitter, std::move(command));
}

std::size_t World::pending_commands() const { return impl_->queue.pending(); }

void World::tick() {
  Impl& impl = *impl_;
  impl.apply_due_commands();
  PassContext pass{&impl, tick_duration_us(impl.tick, impl.options.tick_rate_hz)};
  impl.assign_shares();
  impl.pool->run(&evaluate_range, &pass);
  for (EvalScratch& scratch : impl.scratch) {
    impl.stats.poses_evaluated += scratch.poses_evaluated;
    scratch.poses_evaluated = 0;
    impl.stats.palettes_streamed += scratch.palettes_streamed;
    scratch.palettes_streamed = 0;
    impl.stats.evaluation_failures += scratch.failures;
    scratch.failures = 0;
  }
  merge_events(impl);
  // The one serial pass over every entity, and only for the world hash (its definition runs
  // in id order): counting failures here too kept the other workers idle for a pass over
  // every entity's state (about 1 MB at 10,000 entities) each tick.
  impl.world_hash = 0;
  impl.tick_check = TickCheck{};
  if (impl.options.tick_checks) {
    for (EvalScratch& scratch : impl.scratch) {
      impl.tick_check.state.add(scratch.check.state);
      impl.tick_check.palettes.add(scratch.check.palettes);
      impl.tick_check.palettes_checked += scratch.check.palettes_checked;
      scratch.check = TickCheck{};
    }
    impl.tick_check.sum_count =
        check_sum_count(!impl.entities.empty(), impl.entities.empty() ? 0 : impl.entities.back().state.id);
  }
  if (impl.options.hash_palettes) {
    Hasher world;
    for (const Entity& entity : impl.entities) {
      world.add_u32(entity.state.id);
      world.add_u64(entity.palette_hash);
      add_root(world, entity.state.root);
    }
    add_events(world, impl.events);
    impl.world_hash = world.value();
  }
  ++impl.tick;
}

void World::fast_forward_tick() {
  Impl& impl = *impl_;
  impl.apply_due_commands();
  const int64_t dt_us = tick_duration_us(impl.tick, impl.options.tick_rate_hz);
  // tick()'s evaluate_range without the evaluation: the same advance per entity.
  impl.events.clear();
  for (Entity& entity : impl.entities) {
    advance_entity(entity.state, *entity.rig, dt_us, event_list(entity, impl.events), impl.tick);
    entity.palette_due = false;
  }
  impl.world_hash = 0;
  impl.tick_check = TickCheck{};
  ++impl.tick;
}

uint64_t World::world_hash_of_palettes() const {
  if (impl_->world_hash != 0) return impl_->world_hash;
  Hasher world;  // tick()'s definition: (entity id, palette hash, root transform) in id order
  for (const Entity& entity : impl_->entities) {
    world.add_u32(entity.state.id);
    world.add_u64(hash_palette(entity.palette));
    add_root(world, entity.state.root);
  }
  add_events(world, impl_->events);
  return world.value();
}

uint64_t World::tick_index() const { return impl_->tick; }
uint32_t World::tick_rate_hz() const { return impl_->options.tick_rate_hz; }
std::span<const QueuedCommand> World::last_tick_commands() const { return impl_->due; }
std::span<const AnimationEvent> World::last_tick_events() const { return impl_->events; }
unsigned World::threads() const { return impl_->pool->size(); }

bool LocalPoseObserver::wants_pose(std::size_t /*index*/, EntityId /*id*/) const { return true; }

void World::set_local_pose_observer(LocalPoseObserver* observer) { impl_->pose_observer = observer; }

void World::set_threads(unsigned threads) {
  threads = std::max(1u, threads);
  if (threads == impl_->pool->size()) return;
  impl_->pool.reset();
  impl_->pool.emplace(threads);
  impl_->options.threads = threads;
  impl_->resize_scratch();
}

std::size_t World::entity_count() const { return impl_->entities.size(); }
EntityId World::entity_id_at(std::size_t index) const { return impl_->entities[index].state.id; }
uint64_t World::membership_version() const { return impl_->membership_version; }
uint64_t World::world_hash() const { return impl_->world_hash; }

bool World::computes_palettes() const {
  return impl_->options.palettes || impl_->options.hash_palettes || impl_->options.tick_checks;
}

const TickCheck& World::tick_check() const { return impl_->tick_check; }

bool World::computes_tick_checks() const { return impl_->options.tick_checks; }

uint64_t World::state_hash_at(std::size_t index) const {
  return impl_->options.tick_checks ? hash_entity_state(impl_->entities[index].state) : 0;
}

std::span<const glm::mat4> World::palette_at(std::size_t index) const {
  return impl_->entities[index].palette;
}

uint64_t World::palette_hash_at(std::size_t index) const {
  return impl_->entities[index].palette_hash;
}

std::span<const glm::mat4> World::palette(EntityId id) const {
  const std::size_t i = impl_->find(id);
  if (i == impl_->entities.size()) return {};
  return impl_->entities[i].palette;
}

const EntityState* World::entity_at(std::size_t index) const {
  return index < impl_->entities.size() ? &impl_->entities[index].state : nullptr;
}

const EntityState* World::find_entity(EntityId id) const {
  const std::size_t i = impl_->find(id);
  return i == impl_->entities.size() ? nullptr : &impl_->entities[i].state;
}

const Rig* World::entity_rig(EntityId id) const {
  const std::size_t i = impl_->find(id);
  return i == impl_->entities.size() ? nullptr : impl_->entities[i].rig;
}

bool World::evaluate_local_pose(EntityId id, std::span<Transform> out) {
  const std::size_t i = impl_->find(id);
  if (i == impl_->entities.size()) return false;
  Entity& entity = impl_->entities[i];
  if (out.size() != entity.rig->skeleton.node_count()) return false;
  return sim::evaluate_local_pose(impl_->tables, entity.state, *entity.rig, out,
                                  impl_->command_scratch);
}

const WorldStats& World::stats() const { return impl_->stats; }

}  // namespace posecast::sim
