#include "posecast/sim/scenario_runner.h"

#include "posecast/hash.h"

namespace posecast::sim {

ScenarioRunner::ScenarioRunner(const Scenario& scenario, const WorldOptions& options)
    : scenario_(scenario), world_(options), chain_state_(Hasher::kOffsetBasis) {}

Result<std::unique_ptr<ScenarioRunner>> ScenarioRunner::create(const Scenario& scenario,
                                                               unsigned threads) {
  WorldOptions options;
  options.tick_rate_hz = scenario.header.tick_rate_hz;
  options.threads = threads;
  options.hash_palettes = true;
  options.tick_checks = true;  // what a recording of the run holds (posecast run --record, regress)
  std::unique_ptr<ScenarioRunner> runner(new ScenarioRunner(scenario, options));
  for (std::size_t i = 0; i < scenario.models.size(); ++i) {
    Result<ModelId> id = runner->world_.add_model(scenario.models[i]);
    if (!id) return Error{"models." + scenario.header.models[i].name + ": " + id.error().message};
  }
  for (const JointMask& mask : scenario.masks) {
    Result<int32_t> id = runner->world_.add_mask(mask);
    if (!id) return Error{"masks." + mask.name + ": " + id.error().message};
  }
  return runner;
}

void ScenarioRunner::step() {
  const uint64_t tick = world_.tick_index();
  const std::vector<Command>& commands = scenario_.commands;
  while (next_command_ < commands.size() && commands[next_command_].tick <= tick) {
    world_.submit(0, commands[next_command_]);
    ++next_command_;
  }
  world_.tick();
  // The chain is a Hasher state carried across ticks (FNV-1a words of tick and world hash).
  chain_state_ = (chain_state_ ^ static_cast<uint32_t>(tick)) * Hasher::kPrime;
  chain_state_ = (chain_state_ ^ static_cast<uint32_t>(tick >> 32)) * Hasher::kPrime;
  const uint64_t h = world_.world_hash();
  chain_state_ = (chain_state_ ^ static_cast<uint32_t>(h)) * Hasher::kPrime;
  chain_state_ = (chain_state_ ^ static_cast<uint32_t>(h >> 32)) * Hasher::kPrime;
  ++ticks_run_;
}

uint64_t ScenarioRunner::run_hash() const {
  Hasher final_mix;
  final_mix.add_u64(chain_state_);
  final_mix.add_u64(ticks_run_);
  return final_mix.value();
}

void ScenarioRunner::seek_commands_to(uint64_t tick) {
  const std::vector<Command>& commands = scenario_.commands;
  next_command_ = 0;
  while (next_command_ < commands.size() && commands[next_command_].tick < tick) ++next_command_;
}

}  // namespace posecast::sim
