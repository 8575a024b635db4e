#include "scenario_driver.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "posecast/rig/model_source.h"

namespace posecast::server {

Result<std::unique_ptr<ScenarioDriver>> ScenarioDriver::load(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Error{path + ": cannot read the scenario file"};
  std::stringstream text;
  text << file.rdbuf();
  Result<sim::ScenarioHeader> header = sim::read_scenario_header(text.str(), path);
  if (!header) return header.error();
  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  std::vector<std::shared_ptr<const Model>> models;
  for (const sim::ScenarioModelSource& source : header->models) {
    std::string where = source.source;
    if (!rig::is_generated_rig_source(where) && std::filesystem::path(where).is_relative()) {
      where = (base / where).string();
    }
    Result<Model> model = rig::load_model_source(where);
    if (!model) return Error{path + ": models." + source.name + ": " + model.error().message};
    models.push_back(std::make_shared<const Model>(std::move(model).value()));
  }
  Result<sim::Scenario> scenario = sim::parse_scenario(text.str(), path, std::move(models));
  if (!scenario) return scenario.error();
  auto driver = std::make_unique<ScenarioDriver>();
  driver->scenario_ = std::move(scenario).value();
  return driver;
}

Status ScenarioDriver::register_masks(Server& server) const {
  for (const sim::JointMask& mask : scenario_.masks) {
    Result<int32_t> id = server.world().add_mask(mask);
    if (!id) return Error{"masks." + mask.name + ": " + id.error().message};
  }
  return {};
}

void ScenarioDriver::submit_due(uint64_t tick, Server& server,
                                const std::function<bool(sim::EntityId)>& skip) {
  const std::vector<sim::Command>& commands = scenario_.commands;
  while (next_ < commands.size() && commands[next_].tick <= tick) {
    const sim::Command& command = commands[next_++];
    const bool lifecycle = std::holds_alternative<sim::SpawnCommand>(command.body) ||
                           std::holds_alternative<sim::DespawnCommand>(command.body);
    if (!lifecycle && skip && skip(command.entity)) continue;
    server.submit(command);  // a spawn carries its place (SpawnCommand::at)
  }
}

std::size_t ScenarioDriver::spawn_count() const {
  std::size_t n = 0;
  for (const sim::Command& c : scenario_.commands) n += std::holds_alternative<sim::SpawnCommand>(c.body);
  return n;
}

}  // namespace posecast::server
