// Scenario parsing: every malformed input gives an error naming the file and field.
#include <gtest/gtest.h>

#include <string>

#include "posecast/sim/scenario.h"
#include "posecast/sim/scenario_runner.h"
#include "test_rig.h"

namespace posecast::sim {
namespace {

std::string wrap_commands(const std::string& commands, const std::string& extra = "") {
  return R"({"posecast_scenario": 1, "models": {"t": "test"}, )" + extra + R"("commands": [)" +
         commands + "]}";
}

const std::string kSpawn = R"({"tick": 0, "op": "spawn", "entity": 1, "model": "t"})";

Result<Scenario> parse(const std::string& text) {
  return parse_scenario(text, "s.json", {test::make_test_model()});
}

std::string error_of(const std::string& text) {
  Result<Scenario> s = parse(text);
  return s.ok() ? std::string("(no error)") : s.error().message;
}

TEST(ScenarioParse, ReadsTheHeader) {
  Result<ScenarioHeader> h = read_scenario_header(
      R"({"posecast_scenario": 1, "tick_rate": 30, "models": {"a": "x.glb", "b": "gen-rig:8"},
          "commands": [{"tick": 7}, {"tick": 41}]})",
      "s.json");
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->tick_rate_hz, 30u);
  EXPECT_EQ(h->ticks, 42u);  // last command tick + 1 when "ticks" is absent
  ASSERT_EQ(h->models.size(), 2u);
  EXPECT_EQ(h->models[0].name, "a");  // file order, not alphabetical
  EXPECT_EQ(h->models[1].source, "gen-rig:8");
}

TEST(ScenarioParse, ExpandsCountsWithStepsAndSortsByTickKeepingFileOrder) {
  Result<Scenario> s = parse(wrap_commands(
      kSpawn + R"(,
      {"tick": 5, "op": "set_speed", "entity": 1, "speed": 2},
      {"tick": 0, "op": "spawn", "entity": 2, "count": 2, "model": "t"},
      {"tick": 0, "op": "play", "entity": 1, "count": 3, "clip": "run", "speed": 1, "speed_step": 0.5,
       "offset_ms": 10, "offset_step_ms": 0.25, "wrap": "ping_pong"})"));
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->commands.size(), 7u);
  EXPECT_EQ(s->commands.back().tick, 5u);
  const auto& play = std::get<PlayCommand>(s->commands[3].body);
  EXPECT_EQ(s->commands[3].entity, 1u);
  EXPECT_EQ(play.motion.clips[0].clip, test::kRun);
  EXPECT_EQ(play.motion.wrap, WrapMode::kPingPong);
  const auto& third = std::get<PlayCommand>(s->commands[5].body);
  EXPECT_EQ(s->commands[5].entity, 3u);
  EXPECT_EQ(third.motion.speed, 2 * kSpeedOne);
  EXPECT_EQ(third.motion.start_offset_us, 10500);
}

TEST(ScenarioParse, ErrorsNameTheFieldAndTheReason) {
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {wrap_commands(kSpawn + R"(, {"tick": 1, "op": "play", "entity": 1, "clip": "sprint"})"),
       "s.json: commands[1].clip: unknown clip 'sprint' (model 't' has: walk, run, wave, idle)"},
      {wrap_commands(R"({"tick": 0, "op": "play", "entity": 1, "clip": "walk"})"),
       "s.json: commands[0].entity: entity 1 at tick 0 is not spawned"},
      {wrap_commands(kSpawn + "," + kSpawn), "s.json: commands[1].entity: entity 1 at tick 0 is already spawned"},
      {wrap_commands(R"({"tick": 0, "op": "spawn", "entity": 1, "model": "nope"})"),
       "s.json: commands[0].model: unknown model 'nope'"},
      {wrap_commands(R"({"tick": 1.5, "op": "spawn", "entity": 1, "model": "t"})"),
       "s.json: commands[0].tick: must be an integer"},
      {wrap_commands(R"({"tick": 0, "op": "jump", "entity": 1})"), "s.json: commands[0].op: unknown op 'jump'"},
      {wrap_commands(R"({"op": "spawn", "entity": 1, "model": "t"})"), "s.json: commands[0].tick: missing"},
      {wrap_commands(R"({"tick": 0, "op": "spawn", "entity": -3, "model": "t"})"),
       "s.json: commands[0].entity: -3 is out of range"},
      {wrap_commands(R"({"tick": 0, "op": "spawn", "entity": 1, "model": "t", "colour": 1})"),
       "s.json: commands[0].colour: unknown field"},
      {wrap_commands(kSpawn + R"(, {"tick": 0, "op": "play", "entity": 1, "clip": "walk", "wrap": "bounce"})"),
       "s.json: commands[1].wrap: 'bounce' is not a wrap mode"},
      {wrap_commands(kSpawn + R"(, {"tick": 0, "op": "play", "entity": 1})"),
       "s.json: commands[1]: give exactly one of \"clip\""},
      {wrap_commands(kSpawn + R"(, {"tick": 0, "op": "play", "entity": 1, "clip": "walk", "speed": 1e9})"),
       "s.json: commands[1].speed: 1000000000.0 is out of range"},
      {wrap_commands(kSpawn + R"(, {"tick": 0, "op": "play", "entity": 1, "clip": "walk", "layer": 4})"),
       "s.json: commands[1].layer: 4 is out of range 0..3"},
      {wrap_commands(kSpawn + R"(, {"tick": 0, "op": "crossfade", "entity": 1, "clip": "walk"})"),
       "s.json: commands[1].duration_ms: missing"},
      {wrap_commands(kSpawn + R"(, {"tick": 0, "op": "play", "entity": 1, "blend": [{"clip": "walk", "weight": -1}]})"),
       "s.json: commands[1].blend[0].weight: -1 is out of range"},
      {wrap_commands(kSpawn + R"(, {"tick": 0, "op": "play", "entity": 1, "clip": "walk"},
                     {"tick": 0, "op": "set_blend_weights", "entity": 1, "weights": [1, 2]})"),
       "s.json: commands[2].weights: 2 weights for a motion of 1 clips"},
      {wrap_commands(kSpawn + R"(, {"tick": 0, "op": "set_mask", "entity": 1, "mask": "legs"})"),
       "s.json: commands[1].mask: unknown mask 'legs'"},
      {wrap_commands(kSpawn + R"(, {"tick": 0, "op": "set_layer_mode", "entity": 1, "mode": "add"})"),
       "s.json: commands[1].mode: 'add' is not a layer mode"},
      {wrap_commands(kSpawn + R"(, {"tick": 0, "op": "set_layer_mode", "entity": 1, "mode": "additive",
                                  "reference": {"clip": "wave", "time": 0}})"),
       "s.json: commands[1].reference.time: unknown field"},
      {wrap_commands("", R"("masks": {"arm": {"model": "t", "joints": ["elbow"]}}, )"),
       "s.json: masks.arm.joints: unknown joint 'elbow'"},
      {wrap_commands("", R"("ticks": 0, )"), "s.json: ticks: 0 is out of range 1.."},
      {R"({"posecast_scenario": 2, "models": {"t": "x"}})", "s.json: posecast_scenario: format version 2 is not supported"},
      {R"({"models": {"t": "x"}})", "s.json: posecast_scenario: missing"},
      {R"({"posecast_scenario": 1, "models": {}})", "s.json: models: must be a non-empty object"},
      {R"({"posecast_scenario": 1, "models": {"t": "x"}, "commands": {}})", "s.json: commands: must be an array"},
      {"{\"posecast_scenario\": 1,\n  \"models\": {\"t\": \"x\"},,\n}", "s.json:2:"},
      {"", "s.json:1:1: invalid JSON"},
      {"[]", "s.json: (top level): the scenario must be a JSON object"},
      {wrap_commands(R"({"tick": 0, "op": "spawn", "entity": 0, "count": 1000000, "model": "t"},
                        {"tick": 1, "op": "despawn", "entity": 0, "count": 1000000},
                        {"tick": 2, "op": "spawn", "entity": 0, "count": 1000000, "model": "t"},
                        {"tick": 3, "op": "despawn", "entity": 0, "count": 1000000},
                        {"tick": 4, "op": "spawn", "entity": 0, "count": 1, "model": "t"})"),
       "s.json: commands: 4000001 commands after \"count\" and \"path\" expansion; at most 4000000"},
      {wrap_commands(R"({"tick": 0, "op": "spawn", "entity": 1, "model": "t", "x": 20000})"),
       "s.json: commands[0].x: 20000 is out of range -16384..16384"},
      {wrap_commands(R"({"tick": 0, "op": "spawn", "entity": 1, "count": 3, "model": "t", "z_step": 9000})"),
       "s.json: commands[0].z_step: z for entity +2 leaves the world"},
      {wrap_commands(R"({"tick": 0, "op": "spawn", "entity": 1, "model": "t", "heading": 3})"),
       "s.json: commands[0].heading: unknown field"},
      {wrap_commands(kSpawn + R"(, {"tick": 0, "op": "teleport", "entity": 1, "z": "far"})"),
       "s.json: commands[1].z: must be a number"},
      {wrap_commands(kSpawn + R"(, {"tick": 0, "op": "move", "entity": 1, "speed": 1})"),
       "s.json: commands[1].op: move for entity 1 at tick 0 (model 't'): the rig has no walk clip"},
      {wrap_commands(kSpawn + R"(, {"tick": 0, "op": "play", "entity": 1, "clip": "wave", "root_motion": 0})"),
       "s.json: commands[1].root_motion: must be"},
  };
  for (const Case& c : cases) {
    const std::string error = error_of(c.text);
    EXPECT_EQ(error.rfind(c.expected, 0), 0u) << "expected: " << c.expected << "\n     got: " << error;
  }
}

TEST(ScenarioParse, GarbageNeverCrashes) {
  const std::string valid = wrap_commands(kSpawn + R"(, {"tick": 2, "op": "crossfade", "entity": 1, "clip": "walk",
      "duration_ms": 100, "sync": true}, {"tick": 3, "op": "set_layer_mode", "entity": 1, "layer": 1,
      "mode": "additive", "reference": {"clip": "wave", "time_ms": 5}})");
  ASSERT_TRUE(parse(valid).ok());
  // Every truncation and a byte substitution at every position: an error or a valid parse.
  // An error names the file ("s.json: ..." or "s.json:line:column: ...") and says something.
  const auto expect_clean_error = [](const Result<Scenario>& r, const std::string& what) {
    if (r.ok()) return;
    const std::string& message = r.error().message;
    EXPECT_EQ(message.rfind("s.json", 0), 0u) << what << ": " << message;
    EXPECT_GT(message.size(), std::string("s.json: ").size()) << what << ": " << message;
  };
  for (std::size_t n = 0; n < valid.size(); ++n) {
    const Result<Scenario> cut = parse(valid.substr(0, n));
    EXPECT_FALSE(cut.ok()) << "prefix of " << n << " bytes";  // the closing brace is missing
    expect_clean_error(cut, "prefix of " + std::to_string(n) + " bytes");
    for (char c : {'"', '{', '9', '-', '\0', '\xff'}) {
      std::string damaged = valid;
      damaged[n] = c;
      expect_clean_error(parse(damaged), "byte " + std::to_string(n) + " set to " + std::to_string(int{c}));
    }
    if (::testing::Test::HasFailure()) return;  // one report, not thousands
  }
}

TEST(ScenarioRun, RunsAndHashesIdenticallyWithAnyThreadCount) {
  Result<Scenario> s = parse(wrap_commands(
      R"({"tick": 0, "op": "spawn", "entity": 0, "count": 20, "model": "t"},
         {"tick": 0, "op": "play", "entity": 0, "count": 20, "blend": [{"clip": "walk"}, {"clip": "run", "weight": 0.5}],
          "offset_step_ms": 31, "speed_step": 0.1},
         {"tick": 10, "op": "crossfade", "entity": 0, "count": 10, "clip": "wave", "duration_ms": 200, "sync": true},
         {"tick": 15, "op": "crossfade", "entity": 5, "count": 10, "clip": "idle", "duration_ms": 200},
         {"tick": 20, "op": "despawn", "entity": 19})",
      R"("ticks": 40, )"));
  ASSERT_TRUE(s.ok()) << s.error().message;
  uint64_t reference = 0;
  for (unsigned threads : {1u, 2u, 5u}) {
    auto runner = ScenarioRunner::create(s.value(), threads);
    ASSERT_TRUE(runner.ok());
    for (uint64_t t = 0; t < s->header.ticks; ++t) runner.value()->step();
    EXPECT_EQ(runner.value()->world().stats().commands_rejected, 0u);
    EXPECT_EQ(runner.value()->world().entity_count(), 19u);
    if (threads == 1) reference = runner.value()->run_hash();
    EXPECT_EQ(runner.value()->run_hash(), reference) << threads;
  }
}

}  // namespace
}  // namespace posecast::sim
